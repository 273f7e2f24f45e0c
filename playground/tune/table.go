package tune

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// cFloat formats v like C's printf("%<width>.<prec>f"), including the
// spelling of NaN and infinities.
func cFloat(v float32, width, prec int) string {
	x := float64(v)
	switch {
	case math.IsNaN(x):
		s := "nan"
		if math.Signbit(x) {
			s = "-nan"
		}
		return fmt.Sprintf("%*s", width, s)
	case math.IsInf(x, 1):
		return fmt.Sprintf("%*s", width, "inf")
	case math.IsInf(x, -1):
		return fmt.Sprintf("%*s", width, "-inf")
	}
	return fmt.Sprintf("%*.*f", width, prec, x)
}

// TuningTableLines returns the lines NCCL logs under NCCL_DEBUG=INFO
// NCCL_DEBUG_SUBSYS=TUNING for this communicator, without the
// "host:pid:tid [dev] NCCL INFO " prefix each log line carries
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L543-L585):
// blocks of three algorithms, each with an "Algorithm" and "Protocol"
// header, the max thread counts, and one "latency/bandwidth" row per
// function. Like the release, the Protocol header of the last block still
// lists nine protocol columns although only PAT remains. A single-rank
// communicator returns from ncclTopoTuneModel before printing: nil.
func (m *Model) TuningTableLines() []string {
	if m.Sys.NRanks <= 1 {
		return nil
	}
	var lines []string
	var b strings.Builder
	for block := 0; block < (NumAlgorithms+2)/3; block++ {
		b.Reset()
		b.WriteString("  Algorithm   |")
		for ba := 0; ba < 3; ba++ {
			a := block*3 + ba
			if a >= NumAlgorithms {
				continue
			}
			fmt.Fprintf(&b, " %14s   %14s   %14s |", "", Algorithm(a), "")
		}
		lines = append(lines, b.String())

		b.Reset()
		b.WriteString("  Protocol    |")
		for ba := 0; ba < 3; ba++ {
			for p := Protocol(0); p < NumProtocols; p++ {
				fmt.Fprintf(&b, " %14s |", p)
			}
		}
		lines = append(lines, b.String())

		b.Reset()
		b.WriteString(" Max NThreads |")
		for ba := 0; ba < 3; ba++ {
			a := block*3 + ba
			if a >= NumAlgorithms {
				continue
			}
			for p := 0; p < NumProtocols; p++ {
				fmt.Fprintf(&b, " %14d |", m.MaxThreads[a][p])
			}
		}
		lines = append(lines, b.String())

		for c := Func(0); c < NumFuncs; c++ {
			b.Reset()
			fmt.Fprintf(&b, "%13s |", c)
			for ba := 0; ba < 3; ba++ {
				a := block*3 + ba
				if a >= NumAlgorithms {
					continue
				}
				for p := 0; p < NumProtocols; p++ {
					b.WriteString(cFloat(m.Latencies[c][a][p], 8, 1))
					b.WriteByte('/')
					b.WriteString(cFloat(m.Bandwidths[c][a][p], 6, 1))
					b.WriteString(" |")
				}
			}
			lines = append(lines, b.String())
		}
	}
	return lines
}

// WriteTuningTable writes TuningTableLines, each prefixed by prefix (for
// example "NCCL INFO " to mimic a log).
func (m *Model) WriteTuningTable(w io.Writer, prefix string) error {
	for _, l := range m.TuningTableLines() {
		if _, err := fmt.Fprintf(w, "%s%s\n", prefix, l); err != nil {
			return fmt.Errorf("write tuning table: %w", err)
		}
	}
	return nil
}

// EnableMatrix returns the message NCCL logs (subsystem ENV, rank 0) when
// NCCL_ALGO or NCCL_PROTO is set, and false otherwise
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L464-L493).
// It shows the matrices right after parsing: 2 marks LL128 left on "auto",
// and the built-in disables (NVLSTree on one node, CollNet, ...) are not
// yet applied. The message spans several lines.
func (m *Model) EnableMatrix() (string, bool) {
	if !m.Opts.AlgoSet && !m.Opts.ProtoSet {
		return "", false
	}
	var b strings.Builder
	b.WriteString("Enabled NCCL Func/Proto/Algo Matrix:")
	b.WriteString("\n     Function | ")
	for p := Protocol(0); p < NumProtocols; p++ {
		fmt.Fprintf(&b, "%8s  ", p)
	}
	b.WriteString(" | ")
	for a := Algorithm(0); a < NumAlgorithms; a++ {
		fmt.Fprintf(&b, "%13s  ", a)
	}
	b.WriteString("\n")
	for f := Func(0); f < NumFuncs; f++ {
		fmt.Fprintf(&b, "%13s | ", f)
		for p := 0; p < NumProtocols; p++ {
			fmt.Fprintf(&b, "%8d  ", m.ParsedProto[f][p])
		}
		b.WriteString(" | ")
		for a := 0; a < NumAlgorithms; a++ {
			fmt.Fprintf(&b, "%13d  ", m.ParsedAlgo[f][a])
		}
		b.WriteString("\n")
	}
	return b.String(), true
}

// ThresholdsLine returns the INIT log line that follows the table
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L610-L616).
func (m *Model) ThresholdsLine() string {
	t := m.ThreadThresholds
	return fmt.Sprintf("threadThresholds %d/%d/%d | %d/%d/%d | %d | %d",
		t[Tree][LL], t[Tree][LL128], t[Tree][Simple], t[Ring][LL], t[Ring][LL128], t[Ring][Simple],
		t[CollNetDirect][Simple], t[CollNetChain][Simple])
}
