package service

// This file answers the export-tuner question: NCCL's algorithm, protocol
// and channel choices per message-size range, written in the CSV format of
// the example tuner plugin of NCCL v2.30.7-1
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/plugins/tuner/example/README.md),
// so that a job can load them with NCCL_TUNER_PLUGIN and
// NCCL_TUNER_CONFIG_FILE.
//
// The plugin reads one configuration per line,
// collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff,
// skips lines starting with '#', parses the sizes with strtoull and matches
// min_bytes <= nBytes <= max_bytes, the first matching line winning
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/plugins/tuner/example/plugin.c#L353-L460,
// pluginGetCollInfo; lines are read into a 256-byte buffer, loadConfig
// #L151-L292). nBytes is NCCL's own count: the whole gathered buffer for
// AllGather and ReduceScatter.

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// TunerAlgoNames, TunerProtoNames and TunerFuncNames are the spellings the example plugin
// parses (plugin.c, parseAlgorithm and parseProtocol), in NCCL's index
// order.
var (
	TunerAlgoNames  = [tune.NumAlgorithms]string{"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
	TunerProtoNames = [tune.NumProtocols]string{"ll", "ll128", "simple"}
	TunerFuncNames  = [tune.NumFuncs]string{"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}
)

// TunerMaxLine is one less than the plugin's line buffer (MAX_LINE_LENGTH).
const TunerMaxLine = 255

// TunerRow is one configuration line of the plugin's CSV.
type TunerRow struct {
	Func       tune.Func
	Min, Max   uint64
	Algo       tune.Algorithm
	Proto      tune.Protocol
	Channels   int // -1 keeps NCCL's count
	NNodes     int
	NRanks     int
	NumPipeOps int
	RegBuff    int
	// Comment, when set, is written as a comment line before the row.
	Comment string
}

// String is the CSV line.
func (r TunerRow) String() string {
	return fmt.Sprintf("%s,%d,%d,%s,%s,%d,%d,%d,%d,%d", TunerFuncNames[r.Func], r.Min, r.Max, TunerAlgoNames[r.Algo], TunerProtoNames[r.Proto],
		r.Channels, r.NNodes, r.NRanks, r.NumPipeOps, r.RegBuff)
}

// TunerExport asks for NCCL's choices as tuner-plugin lines.
type TunerExport struct {
	// Colls is "all" (or empty) or a comma list of collectives.
	Colls string
	// KeepNCCLChannels writes -1 in the channels column; AnyShape writes
	// -1 for nNodes and nRanks.
	KeepNCCLChannels, AnyShape bool
}

// TunerConfig is the answer to the export-tuner question: comment lines
// and the configuration rows, in the order the plugin reads them.
type TunerConfig struct {
	Checked
	Comments []string
	Rows     []TunerRow
}

// CSV is the file the plugin loads with NCCL_TUNER_CONFIG_FILE.
func (c *TunerConfig) CSV() string {
	var b strings.Builder
	for _, l := range c.Comments {
		b.WriteString("# " + l + "\n")
	}
	for _, r := range c.Rows {
		if r.Comment != "" {
			b.WriteString("# " + r.Comment + "\n")
		}
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// ExportTuner answers the export-tuner question for req (system fields
// and Dtype, default float32).
func (s *Service) ExportTuner(ctx context.Context, req *Request, x TunerExport) (*TunerConfig, error) {
	colls := x.Colls
	if strings.TrimSpace(colls) == "" {
		colls = "all"
	}
	funcs, err := parseFuncList(colls)
	if err != nil {
		return nil, fieldErr("coll", err.Error())
	}
	dts := strings.TrimSpace(req.Dtype)
	if dts == "" {
		dts = "float32"
	}
	dt, err := tune.LookupDatatype(dts)
	if err != nil {
		return nil, fieldErr("dtype", err.Error())
	}
	b, err := s.tuned(ctx, req)
	if err != nil {
		return nil, err
	}
	m := b.res.Tune
	c := &TunerConfig{Checked: b.checked()}
	c.Comments = append(c.Comments,
		fmt.Sprintf("NCCL tuner configuration written by `ncclsim export-tuner` for %s x %d node(s), %d ranks, %s.", b.host.name, m.Sys.NNodes, m.Sys.NRanks, dt),
		"Choices of NCCL "+NCCLVersion+"'s own tuning model (the same as without the plugin, unless the system differs from the model).")
	if len(b.env.Names()) > 0 {
		c.Comments = append(c.Comments, "NCCL environment modelled: "+strings.Join(EnvWords(b.env), " "))
	}
	c.Comments = append(c.Comments,
		"Sizes are NCCL's nBytes (AllGather/ReduceScatter: the whole gathered buffer); ranges include both ends.",
		"Use: NCCL_TUNER_PLUGIN=<path to the example plugin> NCCL_TUNER_CONFIG_FILE=<this file>",
		"collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff")
	for _, f := range funcs {
		rows, err := tunerRows(m, f, dt, x.KeepNCCLChannels, x.AnyShape)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if line := r.String(); len(line) > TunerMaxLine {
				return nil, fmt.Errorf("export-tuner: line longer than the plugin's %d characters: %s", TunerMaxLine, line)
			}
		}
		c.Rows = append(c.Rows, rows...)
	}
	return c, nil
}

// EnvWords renders env as NAME=VALUE words in name order.
func EnvWords(env ncclenv.Env) []string {
	var out []string
	for _, n := range env.Names() {
		v, _ := env.Lookup(n)
		out = append(out, n+"="+v)
	}
	return out
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tunerRows turns the model's choices for f into plugin lines covering
// every size from 0 to the largest size_t.
func tunerRows(m *tune.Model, f tune.Func, dt tune.Datatype, keepChannels, anyShape bool) ([]TunerRow, error) {
	segs, err := estimate.Segments(m, tune.Request{Func: f, Datatype: dt}, uint64(1)<<44)
	if err != nil {
		return nil, fmt.Errorf("export-tuner %s: %w", f, err)
	}
	nNodes, nRanks := m.Sys.NNodes, m.Sys.NRanks
	if anyShape {
		nNodes, nRanks = -1, -1
	}
	rows := make([]TunerRow, 0, len(segs))
	for i, s := range segs {
		r := TunerRow{Func: f, Min: s.MinBytes, Max: s.MaxBytes, Algo: s.Algo, Proto: s.Proto, Channels: s.NChannels,
			NNodes: nNodes, NRanks: nRanks, NumPipeOps: 1, RegBuff: -1}
		if keepChannels {
			r.Channels = -1
		}
		if i == len(segs)-1 {
			r.Max = math.MaxUint64
		}
		// Ranges that differ only in a column not written merge.
		if k := len(rows) - 1; k >= 0 && rows[k].Algo == r.Algo && rows[k].Proto == r.Proto && rows[k].Channels == r.Channels {
			rows[k].Max = r.Max
			continue
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// parseFuncList reads "all" or a comma list of collective names.
func parseFuncList(s string) ([]tune.Func, error) {
	if strings.TrimSpace(strings.ToLower(s)) == "all" {
		return []tune.Func{tune.Broadcast, tune.Reduce, tune.AllGather, tune.ReduceScatter, tune.AllReduce}, nil
	}
	var out []tune.Func
	seen := map[tune.Func]bool{}
	for _, name := range strings.Split(s, ",") {
		f, err := tune.LookupFunc(name)
		if err != nil {
			return nil, err
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}
