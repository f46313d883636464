# tflint configuration for `make lint`: the terraform ruleset bundled in the tflint binary
# (no plugin download), run on every module and example directory by scripts/tflint.sh.
config {
  # Modules called by a directory are not fetched; each module directory is linted on its own.
  call_module_type = "none"
}

plugin "terraform" {
  enabled = true
  preset  = "recommended"
}

# Beyond the recommended preset: what a module library promises its users.
rule "terraform_documented_variables" {
  enabled = true
}

rule "terraform_documented_outputs" {
  enabled = true
}

rule "terraform_typed_variables" {
  enabled = true
}

rule "terraform_naming_convention" {
  enabled = true
}

rule "terraform_unused_declarations" {
  enabled = true
}

rule "terraform_comment_syntax" {
  enabled = true
}
