#!/bin/sh
# regen.sh: rewrites presets.golden.json from the ncclsim of this tree, after a
# deliberate model or calibration change (see preset_golden_test.go). Run from
# the repository root: sh playground/service/testdata/regen.sh
set -eu
export GOFLAGS=-tags=sqlite_fts5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/ncclsim" ./playground/cmd/ncclsim
mkdir "$tmp/out"
for p in $("$tmp/ncclsim" presets --json | python3 -c 'import json,sys; [print(p["name"]) for p in json.load(sys.stdin)]'); do
	"$tmp/ncclsim" topo --preset "$p" --json >"$tmp/out/$p-topo.json"
	"$tmp/ncclsim" tune --preset "$p" --json >"$tmp/out/$p-tune.json"
	"$tmp/ncclsim" estimate --preset "$p" --coll allreduce --bytes 64M --json >"$tmp/out/$p-estimate.json"
	"$tmp/ncclsim" step --preset "$p" --model ddp --params 1.5B --forward-ms 60 --backward-ms 120 --optimizer-ms 10 --json >"$tmp/out/$p-step.json"
done
python3 playground/service/testdata/digest.py "$tmp/out" >playground/service/testdata/presets.golden.json
