package service

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Command returns the ncclsim command line that prints the same numbers as
// the page for req: `ncclsim <cmd> --preset NAME [--nodes N] [--p2p MODE]
// [--env NAME=VALUE]... [command flags] --json`. A pasted topology is
// referred to by req.XMLName (the page offers the file for download).
// Arguments are quoted for POSIX shells when they need it.
func Command(cmd string, req *Request) string {
	var extra []string
	if cmd == "step" {
		extra = stepArgs(req)
	}
	return commandLine(cmd, req, extra)
}

// commandLine writes the command line of question cmd for req, with extra
// (the step question's flags, which only the step page computes, so that
// the other pages' wasm does not link them) after the system flags.
func commandLine(cmd string, req *Request, extra []string) string {
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
	case "topo":
		if req.Full {
			args = append(args, "--full")
		}
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
	case "compare":
		// The pasted text, saved as a file.
		args = append(args, "--nccl-tests", "FILE")
		if f := strings.ToLower(strings.TrimSpace(req.Fabric)); f != "" && f != "auto" {
			args = append(args, "--fabric", f)
		}
	}
	args = append(args, extra...)
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
	if g := t(in.GPU); g != "" {
		args = append(args, "--gpu", g)
		add("--batch", in.Batch, strconv.Itoa(DefaultBatch))
		add("--seq-len", in.SeqLen, strconv.Itoa(DefaultSeqLen))
		add("--mfu", in.MFU, "")
		add("--optimizer", strings.ToLower(in.Optimizer), string(DefaultOptimizer))
	}
	if f := strings.ToLower(t(req.Fabric)); f != "" && f != "auto" {
		args = append(args, "--fabric", f)
	}
	return args
}

// ParseCommand reads back a command line Command wrote (without the
// leading "ncclsim", split into arguments, quotes removed): the question
// ("topo", "tune", "estimate", "step" or "compare") and its request. A pasted
// topology keeps only its file name in XMLName; the caller supplies XML.
// It accepts exactly the flags Command writes (--name value or
// --name=value), so the two stay inverse (TestCommandRoundTrip); ncclsim's
// own flags are a superset. It is written without package flag, which
// would add its package state to the wasm binaries.
func ParseCommand(args []string) (string, *Request, error) {
	if len(args) == 0 {
		return "", nil, errors.New("empty command")
	}
	q := args[0]
	req := &Request{Nodes: 1}
	in := &req.Step
	str := map[string]*string{"preset": &req.Preset, "xml": &req.XMLName, "p2p": &req.P2P}
	bools := map[string]*bool{"json": new(bool)}
	switch q {
	case PageTopo:
	case PageTune:
		str["coll"] = &req.Coll
	case PageEstimate:
		str["coll"], str["bytes"], str["dtype"], str["fabric"] = &req.Coll, &req.Bytes, &req.Dtype, &req.Fabric
	case PageStep:
		for k, v := range map[string]*string{"model": &in.Mode, "params": &in.Params, "dtype": &req.Dtype, "layers": &in.Layers,
			"tensors-per-layer": &in.TensorsPerLayer, "bucket-cap-mb": &in.BucketCapMB, "forward-ms": &in.ForwardMs,
			"backward-ms": &in.BackwardMs, "optimizer-ms": &in.OptimizerMs, "reduce-dtype": &in.ReduceDtype,
			"shard-dtype": &in.ShardDtype, "timing": &in.Timing, "fabric": &req.Fabric,
			"gpu": &in.GPU, "batch": &in.Batch, "seq-len": &in.SeqLen, "mfu": &in.MFU, "optimizer": &in.Optimizer} {
			str[k] = v
		}
		bools["first-iteration"] = &in.FirstIteration
	case "compare":
		// The name given to --nccl-tests is not kept: the text itself
		// comes with the request (Request.NCCLTests).
		str["fabric"], str["nccl-tests"] = &req.Fabric, new(string)
	default:
		return "", nil, fmt.Errorf("unknown question %q", q)
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			return "", nil, fmt.Errorf("ncclsim %s: unexpected argument %q", q, a)
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		if b, ok := bools[name]; ok {
			*b = !hasVal || val == "true"
			continue
		}
		if name == "reshard-after-forward" && q == PageStep && hasVal {
			in.Reshard = val
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return "", nil, fmt.Errorf("ncclsim %s: --%s needs a value", q, name)
			}
			i++
			val = args[i]
		}
		switch dst, ok := str[name]; {
		case ok:
			*dst = val
		case name == "env":
			req.Env = append(req.Env, val)
		case name == "nodes":
			n, err := strconv.Atoi(val)
			if err != nil {
				return "", nil, fmt.Errorf("ncclsim %s: --nodes %q", q, val)
			}
			req.Nodes = n
		default:
			return "", nil, fmt.Errorf("ncclsim %s: flag --%s is not one Command writes", q, name)
		}
	}
	return q, req, nil
}
