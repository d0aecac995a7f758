#!/usr/bin/env bash
# Install the Debian packages named on the command line if they are missing.
# As root this runs apt-get; otherwise it prints the command to run (and what to do without root).
set -euo pipefail
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "Installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "warning: missing Debian packages: ${missing[*]}. Run: sudo apt-get install ${missing[*]}" >&2
  echo "         (without root, see docs/deploying.md: ARENA_WORDNET_DIR points to another WordNet copy)" >&2
fi
