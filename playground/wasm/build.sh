#!/bin/sh
# build.sh OUTDIR: the one place the playground's WebAssembly is built (the
# Makefile's wasm target and generator/sitetest call it). Writes one
# binary per playground page, OUTDIR/PAGE.wasm for topology, algorithms,
# estimator, step and doctor (each main registers only its page's
# question, so each links only what that question reaches), the
# estimator's estimator-paste.wasm, and the wasm_exec.js of the same Go
# toolchain. -trimpath and -s -w leave out file paths, the symbol table
# and DWARF, which no page needs.
set -eu
out=$1
go=${GO:-go}
mkdir -p "$out"
# The model pages are built with the tag nodoctor, which leaves the doctor
# question (and package doctor's tables) out of them. The project's own
# packages are compiled without inlining (-l): measured on step.wasm, that
# is 34 KB gzip less (1,309,462 -> 1,275,867 bytes compress/gzip), with no
# difference in BenchmarkBuild beyond the noise; the standard library keeps
# its inlining (all=-l would save 80 KB but slow the runtime's own paths),
# except fmt, encoding/xml and time, which no hot path of the model goes
# through (messages, one parse per topology, the clock): measured on
# estimator.wasm, 1,299,766 -> 1,282,201 bytes compress/gzip (session 9),
# and BenchmarkBoundedFigures under GOOS=js no slower (pair summary of 512
# GPUs 432-522 ms before, 329-457 ms after; timeline 15-19 ms, 9-11 ms).
# The estimator page's first binary is also built with nopaste, which leaves
# out the paste box (the nccl-tests reader and the comparison);
# estimator-paste.wasm, the same main with it, is what the page loads when a
# run is pasted.
build() { # build NAME MAIN TAGS
	GOOS=js GOARCH=wasm "$go" build -tags="$3" -trimpath -gcflags='github.com/distributed-nav/distributed-nav/...=-l' -gcflags=fmt=-l -gcflags=encoding/xml=-l -gcflags=time=-l -ldflags='-s -w' -o "$out/$1.wasm" "./playground/wasm/$2"
}
for bin in topology algorithms step; do
	build "$bin" "$bin" nodoctor
done
build estimator estimator nodoctor,nopaste
build estimator-paste estimator nodoctor
build doctor doctor nocatalog
# The doctor is built with nocatalog: NCCL's message catalog (data/messages, about
# 59 KB with each file gzip -9) is left out of doctor.wasm and copied beside it,
# where the worker fetches it (worker.js, the module's files list; package
# ncclmsg's Files).
mkdir -p "$out/messages"
cp data/messages/nccl-v2.30.7-1.tsv data/messages/nccl-older.tsv data/messages/nccl-results.tsv data/messages/ibv-wc.tsv data/messages/path-types.tsv "$out/messages/"
cp "$("$go" env GOROOT)/lib/wasm/wasm_exec.js" "$out/wasm_exec.js"
