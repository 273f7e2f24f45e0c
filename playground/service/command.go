package service

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Command returns the ncclsim command line that prints the same numbers as
// the page for req: `ncclsim <cmd> --preset NAME [--nodes N] [--p2p MODE]
// [--env NAME=VALUE]... [command flags] --json`. A pasted topology is
// referred to by req.XMLName (the page offers the file for download).
// Arguments are quoted for POSIX shells when they need it.
func Command(cmd string, req *Request) string {
	args := []string{"ncclsim", cmd}
	if req.Preset != "" {
		args = append(args, "--preset", req.Preset)
	} else {
		name := req.XMLName
		if name == "" {
			name = "topology.xml"
		}
		args = append(args, "--xml", name)
	}
	if req.Nodes > 1 {
		args = append(args, "--nodes", strconv.Itoa(req.Nodes))
	}
	if p := strings.ToLower(strings.TrimSpace(req.P2P)); p != "" && p != "auto" {
		args = append(args, "--p2p", p)
	}
	for _, e := range req.Env {
		if strings.TrimSpace(e) == "" {
			continue
		}
		name, val, _ := strings.Cut(e, "=")
		args = append(args, "--env", strings.TrimSpace(name)+"="+strings.TrimSpace(val))
	}
	switch cmd {
	case "tune":
		if c := strings.TrimSpace(req.Coll); c != "" && !strings.EqualFold(c, "allreduce") {
			args = append(args, "--coll", strings.ToLower(c))
		}
	case "estimate":
		args = append(args, "--coll", strings.ToLower(strings.TrimSpace(req.Coll)), "--bytes", strings.TrimSpace(req.Bytes))
		if d := strings.TrimSpace(req.Dtype); d != "" && !strings.EqualFold(d, "float32") {
			args = append(args, "--dtype", strings.ToLower(d))
		}
		if f := strings.ToLower(strings.TrimSpace(req.Fabric)); f != "" && f != "auto" {
			args = append(args, "--fabric", f)
		}
	case "step":
		args = append(args, stepArgs(req)...)
	}
	args = append(args, "--json")
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell unless it consists only of
// characters no shell treats specially.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_=.,:/+@%", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stepArgs returns the `ncclsim step` flags of req that differ from the
// defaults.
func stepArgs(req *Request) []string {
	in := req.Step
	t := strings.TrimSpace
	mode := strings.ToLower(t(in.Mode))
	if mode == "" {
		mode = "ddp"
	}
	args := []string{"--model", mode, "--params", t(in.Params)}
	if d := strings.ToLower(t(req.Dtype)); d != "" && d != "bf16" && d != "bfloat16" {
		args = append(args, "--dtype", d)
	}
	add := func(flag, v, def string) {
		if v = t(v); v != "" && v != def {
			args = append(args, flag, v)
		}
	}
	add("--layers", in.Layers, "32")
	if mode == "ddp" {
		add("--tensors-per-layer", in.TensorsPerLayer, "8")
		add("--bucket-cap-mb", in.BucketCapMB, "")
		if in.FirstIteration {
			args = append(args, "--first-iteration")
		}
	}
	add("--forward-ms", in.ForwardMs, "")
	add("--backward-ms", in.BackwardMs, "")
	add("--optimizer-ms", in.OptimizerMs, "")
	if mode == "fsdp" {
		if strings.EqualFold(t(in.Reshard), "false") {
			args = append(args, "--reshard-after-forward=false")
		}
		add("--reduce-dtype", strings.ToLower(in.ReduceDtype), "")
		add("--shard-dtype", strings.ToLower(in.ShardDtype), "")
	}
	add("--timing", strings.ToLower(in.Timing), "calibrated")
	if f := strings.ToLower(t(req.Fabric)); f != "" && f != "auto" {
		args = append(args, "--fabric", f)
	}
	return args
}

// ParseCommand reads back a command line Command wrote (without the
// leading "ncclsim", split into arguments, quotes removed): the question
// ("topo", "tune", "estimate" or "step") and its request. A pasted
// topology keeps only its file name in XMLName; the caller supplies XML.
// It accepts exactly the flags Command writes, so the two stay inverse
// (TestCommandRoundTrip); ncclsim's own flags are a superset.
func ParseCommand(args []string) (string, *Request, error) {
	if len(args) == 0 {
		return "", nil, errors.New("empty command")
	}
	q := args[0]
	req := &Request{}
	fs := flag.NewFlagSet("ncclsim "+q, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&req.Preset, "preset", "", "")
	fs.StringVar(&req.XMLName, "xml", "", "")
	fs.IntVar(&req.Nodes, "nodes", 1, "")
	fs.StringVar(&req.P2P, "p2p", "auto", "")
	fs.Func("env", "", func(v string) error { req.Env = append(req.Env, v); return nil })
	fs.Bool("json", false, "")
	in := &req.Step
	switch q {
	case PageTopo:
	case PageTune:
		fs.StringVar(&req.Coll, "coll", "", "")
	case PageEstimate:
		fs.StringVar(&req.Coll, "coll", "", "")
		fs.StringVar(&req.Bytes, "bytes", "", "")
		fs.StringVar(&req.Dtype, "dtype", "", "")
		fs.StringVar(&req.Fabric, "fabric", "", "")
	case PageStep:
		fs.StringVar(&in.Mode, "model", "", "")
		fs.StringVar(&in.Params, "params", "", "")
		fs.StringVar(&req.Dtype, "dtype", "", "")
		fs.StringVar(&in.Layers, "layers", "", "")
		fs.StringVar(&in.TensorsPerLayer, "tensors-per-layer", "", "")
		fs.StringVar(&in.BucketCapMB, "bucket-cap-mb", "", "")
		fs.BoolVar(&in.FirstIteration, "first-iteration", false, "")
		fs.StringVar(&in.ForwardMs, "forward-ms", "", "")
		fs.StringVar(&in.BackwardMs, "backward-ms", "", "")
		fs.StringVar(&in.OptimizerMs, "optimizer-ms", "", "")
		fs.Func("reshard-after-forward", "", func(v string) error { in.Reshard = v; return nil })
		fs.StringVar(&in.ReduceDtype, "reduce-dtype", "", "")
		fs.StringVar(&in.ShardDtype, "shard-dtype", "", "")
		fs.StringVar(&in.Timing, "timing", "", "")
		fs.StringVar(&req.Fabric, "fabric", "", "")
	default:
		return "", nil, fmt.Errorf("unknown question %q", q)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return "", nil, fmt.Errorf("ncclsim %s: %w", q, err)
	}
	if fs.NArg() > 0 {
		return "", nil, fmt.Errorf("ncclsim %s: unexpected argument %q", q, fs.Arg(0))
	}
	return q, req, nil
}
