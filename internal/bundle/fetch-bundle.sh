#!/bin/bash
# gpucluster-fetch-bundle: fetches this node's bootstrap bundle from OSS with the instance's RAM
# role, checks its SHA-256 digest, unpacks it over / and starts the bootstrap unit. Written and
# run once by the user data's cloud-config (terraform-provider-gpucluster, internal/bundle):
#   gpucluster-fetch-bundle.sh METADATA OSS REGION BUCKET KEY DIGEST ROLE UNIT
# METADATA is the metadata service (http://100.100.100.200), OSS the URL the key is appended to.
# The node's bootstrap reuses it for the join material (bootstrap's JoinStore, issue #31):
#   gpucluster-fetch-bundle.sh get|put METADATA OSS REGION BUCKET KEY ROLE
# get prints the object on stdout; put stores stdin there (a secret: never on a command line).
#
# Secrets (the role's keys and token, the signature, the metadata token) stay in shell variables
# and reach curl on its standard input (-H @-), never on a command line, and are never printed:
# a failure names the HTTP status and OSS's error code, never a response body (OSS's
# SignatureDoesNotMatch body quotes what it signed, security token included). No set -x.
# GPUCLUSTER_BUNDLE_ROOT (default /), GPUCLUSTER_BUNDLE_TRIES and GPUCLUSTER_BUNDLE_DELAY are for
# tests.
set -euo pipefail
umask 077
export LC_ALL=C

log() { echo "gpucluster-bundle: $*" >&2; }

# get METHOD URL: the request's header lines come on stdin (curl -H @-,
# https://curl.se/docs/manpage.html#-H); the body lands in $tmp/body, the status in s (000: no
# answer at all).
get() {
  : >"$tmp/body"
  s=$(curl -sS -X "$1" -H @- -o "$tmp/body" -w '%{http_code}' --connect-timeout 5 --max-time 300 "${@:3}" "$2") || s=000
}

# field NAME JSON: the string value of NAME in the metadata service's flat JSON (no jq on the
# image).
field() {
  if [[ $2 =~ \"$1\"[[:space:]]*:[[:space:]]*\"([^\"]*)\" ]]; then printf %s "${BASH_REMATCH[1]}"; fi
}

# unhex HEX: the bytes, through printf's \x escapes.
unhex() {
  local h=$1 o=''
  while [[ $h ]]; do o+="\\x${h:0:2}"; h=${h:2}; done
  printf %b "$o"
}

# hexof STRING: its bytes in hex.
hexof() {
  local s=$1 i c h=''
  for ((i = 0; i < ${#s}; i++)); do printf -v c %02x "'${s:i:1}"; h+=$c; done
  printf %s "$h"
}

# hmac KEYHEX MESSAGE: HMAC-SHA256 (RFC 2104) in hex, in bash and sha256sum, because
# openssl dgst -hmac would take the key on its command line, where ps shows it.
hmac() {
  local kh=$1 i c ip='' op=''
  if ((${#kh} > 128)); then kh=$(unhex "$kh" | sha256sum); kh=${kh:0:64}; fi
  while ((${#kh} < 128)); do kh+=0; done
  for ((i = 0; i < 64; i++)); do
    c=$((16#${kh:2*i:2}))
    printf -v ip '%s\\x%02x' "$ip" $((c ^ 0x36))
    printf -v op '%s\\x%02x' "$op" $((c ^ 0x5c))
  done
  c=$({ printf %b "$ip"; printf %s "$2"; } | sha256sum)
  c=$({ printf %b "$op"; unhex "${c:0:64}"; } | sha256sum)
  printf %s "${c:0:64}"
}

# sign SECRET STRING-TO-SIGN: the V4 signature, through the signing key derived from
# "aliyun_v4"+secret, the day, the region, "oss" and "aliyun_v4_request".
sign() {
  local k
  k=$(hmac "$(hexof "aliyun_v4$1")" "${now:0:8}")
  k=$(hmac "$k" "$region")
  k=$(hmac "$k" oss)
  k=$(hmac "$k" aliyun_v4_request)
  hmac "$k" "$2"
}

# fetch makes one attempt: a metadata token (security hardening mode), the role's keys, and the
# GetObject signed with them. It leaves the object in $tmp/bundle, or sets why (nothing secret
# in it) and fails. Signature V4, not V1: OSS no longer takes V1 on buckets created since
# September 2025
# (https://alibabacloud.com/en/notice/notice_on_the_discontinuation_of_the_oss_v1_signature_algorithm_40f).
fetch() {
  local t c ak sk tok scope sig m=${mode:-GET} up=()
  [[ $m != PUT ]] || up=(-T "$tmp/in")
  get PUT "$md/latest/api/token" <<<"X-aliyun-ecs-metadata-token-ttl-seconds: 300"
  [[ $s == 200 ]] || { why="metadata service: token: HTTP $s"; return 1; }
  t="X-aliyun-ecs-metadata-token: $(<"$tmp/body")"
  get GET "$md/latest/meta-data/ram/security-credentials/" <<<"$t"
  [[ $s != 404 ]] || { why="this instance has no RAM role (metadata security-credentials: HTTP 404)"; return 1; }
  [[ $s == 200 ]] || { why="metadata service: RAM role: HTTP $s"; return 1; }
  c=$(<"$tmp/body")
  [[ $c == "$role" ]] || { why="this instance's RAM role is $c, not $role"; return 1; }
  get GET "$md/latest/meta-data/ram/security-credentials/$role" <<<"$t"
  c=$(<"$tmp/body")
  : >"$tmp/body"
  [[ $s == 200 ]] || { why="metadata service: keys of RAM role $role: HTTP $s"; return 1; }
  ak=$(field AccessKeyId "$c") sk=$(field AccessKeySecret "$c") tok=$(field SecurityToken "$c")
  [[ $ak && $sk && $tok ]] || { why="metadata service: keys of RAM role $role: not the expected JSON"; return 1; }
  # https://www.alibabacloud.com/help/en/oss/developer-reference/recommend-to-use-signature-version-4:
  # the canonical request signs the x-oss-* headers; the key needs no escaping (StubSpec).
  now=$(date -u +%Y%m%dT%H%M%SZ)
  scope=${now:0:8}/$region/oss/aliyun_v4_request
  # A put asks for KMS encryption itself (x-oss-server-side-encryption, signed as an x-oss-*
  # header), whatever the bucket's default is:
  # https://www.alibabacloud.com/help/en/oss/developer-reference/putobject
  local e='' eh=''
  [[ $m != PUT ]] || e=$'x-oss-server-side-encryption:KMS\n' eh='x-oss-server-side-encryption: KMS'
  c=$(printf '%s\n/%s/%s\n\nx-oss-content-sha256:UNSIGNED-PAYLOAD\nx-oss-date:%s\nx-oss-security-token:%s\n%s\n\nUNSIGNED-PAYLOAD' \
    "$m" "$bucket" "$key" "$now" "$tok" "$e" | sha256sum)
  sig=$(sign "$sk" "OSS4-HMAC-SHA256"$'\n'"$now"$'\n'"$scope"$'\n'"${c:0:64}")
  get "$m" "$oss/$key" "${up[@]}" <<EOF
x-oss-date: $now
x-oss-content-sha256: UNSIGNED-PAYLOAD
x-oss-security-token: $tok
$eh
Authorization: OSS4-HMAC-SHA256 Credential=$ak/$scope,Signature=$sig
EOF
  if [[ $s != 200 ]]; then
    c=
    if [[ $(<"$tmp/body") =~ \<Code\>([A-Za-z0-9.]+)\</Code\> ]]; then c=" ${BASH_REMATCH[1]}"; fi
    : >"$tmp/body"
    why="$m $oss/$key: HTTP $s$c"
    if [[ $c == " AccessDenied" ]]; then why+=" (does the bucket policy let role $role $([[ $m == GET ]] && echo read || echo write) it?)"; fi
    return 1
  fi
  mv "$tmp/body" "$tmp/bundle"
}

# retried: fetch until it succeeds. At boot the network, the metadata service, the role's keys,
# the clock (OSS refuses a time 15 minutes off) and OSS may each lag: every failure is retried,
# backing off to a minute apart.
retried() {
  local tries=${GPUCLUSTER_BUNDLE_TRIES:-10} delay=${GPUCLUSTER_BUNDLE_DELAY:-2} n=1
  until fetch; do
    ((n < tries)) || { log "giving up after $n attempts: $why"; exit 1; }
    log "attempt $n/$tries failed: $why; again in ${delay}s"
    sleep "$delay"
    n=$((n + 1)) delay=$((delay * 2 > 60 ? 60 : delay * 2))
  done
}

# object get|put ...: one object of the join material, with the same retries.
object() {
  (($# == 7)) || { log "usage: $0 get|put METADATA OSS REGION BUCKET KEY ROLE"; exit 2; }
  mode=${1^^} md=$2 oss=$3 region=$4 bucket=$5 key=$6 role=$7
  [[ $mode != PUT ]] || cat >"$tmp/in"
  retried
  [[ $mode != GET ]] || cat "$tmp/bundle"
}

main() {
  # /run is a tmpfs: the bundle and the join material, secrets, never touch a disk here.
  tmp=$(mktemp -d "${TMPDIR:-/run}/gpucluster-bundle.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  [[ ${1:-} != get && ${1:-} != put ]] || { object "$@"; return; }
  (($# == 8)) || { log "usage: $0 METADATA OSS REGION BUCKET KEY DIGEST ROLE UNIT"; exit 2; }
  md=$1 oss=$2 region=$3 bucket=$4 key=$5 digest=$6 role=$7 unit=$8
  local root=${GPUCLUSTER_BUNDLE_ROOT:-} sum
  retried
  sum=$(sha256sum "$tmp/bundle")
  sum=sha256:${sum%% *}
  [[ $sum == "$digest" ]] || { log "bundle $oss/$key has digest $sum, not $digest: refusing it"; exit 1; }
  # Modes as packed (-p), owner the caller (root on the node), times of now (-m), as write_files;
  # directories tar creates get 0755, as cloud-init's.
  (umask 022 && tar -xzpmf "$tmp/bundle" --no-same-owner -C "$root/")
  log "bundle $digest unpacked; starting $unit"
  systemctl daemon-reload
  systemctl enable --now "$unit"
}

main "$@"
