#!/bin/sh
# build.sh OUTDIR: the one place the playground's WebAssembly is built (the
# Makefile's wasm target and generator/sitetest call it). Writes one
# binary per playground page, OUTDIR/PAGE.wasm for topology, algorithms,
# estimator, step and doctor (each main registers only its page's
# question, so each links only what that question reaches), and the
# wasm_exec.js of the same Go toolchain. -trimpath and -s -w leave out file paths, the symbol table
# and DWARF, which no page needs.
set -eu
out=$1
go=${GO:-go}
mkdir -p "$out"
for bin in topology algorithms estimator step doctor; do
	GOOS=js GOARCH=wasm "$go" build -trimpath -ldflags='-s -w' -o "$out/$bin.wasm" "./playground/wasm/$bin"
done
cp "$("$go" env GOROOT)/lib/wasm/wasm_exec.js" "$out/wasm_exec.js"
