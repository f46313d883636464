# The live stack: one unit per research scenario. `terragrunt stack generate` copies each unit into
# .terragrunt-stack/<path>, at the same depth as units/<name>, so the units' relative module
# sources resolve from both places; `terragrunt stack run apply` applies them.

unit "ai_training" {
  source = "./units/ai-training"
  path   = "ai-training"
}

unit "molecular_dynamics" {
  source = "./units/molecular-dynamics"
  path   = "molecular-dynamics"
}

unit "engineering_simulation" {
  source = "./units/engineering-simulation"
  path   = "engineering-simulation"
}
