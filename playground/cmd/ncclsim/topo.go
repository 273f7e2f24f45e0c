package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// runTopo implements `ncclsim topo`; stdin is read for "-" file names.
func runTopo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("topo", stderr)
	var sf systemFlags
	sf.register(fs)
	timeout := fs.Duration("timeout", 30*time.Second, "give up the graph search after this long")
	asJSON := fs.Bool("json", false, "print JSON")
	full := fs.Bool("full", false, fmt.Sprintf("list every GPU pair and GPU-NIC path also on hosts with more than %d GPUs or %d GPU-NIC paths (summarised by default)", topo.MaxListedGPUs, topo.MaxListedGPUNICs))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		// The search always has NCCL's step and work budgets; a wall-clock
		// limit of zero or less would mean none at all.
		return usagef("--timeout: %v is not a positive duration (for example 30s)", *timeout)
	}
	req, err := sf.request(stdin)
	if err != nil {
		return err
	}
	req.Timeout, req.Full = *timeout, *full
	out, err := service.New().Topo(ctx, req)
	if err != nil {
		return cliError(err, req, stderr)
	}
	report(stderr, out.Checked)
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return printTopo(stdout, out)
}

// printTopo writes the topology answer as text.
func printTopo(w io.Writer, t *service.TopoResult) error {
	s := t.System
	fmt.Fprintf(w, "System %s\n", s.Name)
	if s.Description != "" {
		fmt.Fprintf(w, "  %s\n", s.Description)
	}
	cpu := strings.TrimSpace(fmt.Sprintf("%s %s %s", s.CPUArch, s.CPUVendor, s.CPUModel))
	fmt.Fprintf(w, "  hosts %d, ranks %d (%d per host), CPU %s x%d, NVSwitch %s, P2P support %s, P2P level %s\n",
		s.Hosts, s.Ranks, s.LocalRanks, cpu, s.CPUs, yesNo(s.NVSwitch), s.P2PSupport, s.P2PLevel)
	fmt.Fprintf(w, "  search: inter-node %s, maxBw %.1f GB/s, totalBw %.1f GB/s\n", yesNo(s.Inter), s.MaxBw, s.TotalBw)
	for _, x := range t.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", x)
	}
	for _, x := range t.Notes {
		fmt.Fprintf(w, "  note: %s\n", x)
	}
	if len(t.Trimmed) > 0 {
		fmt.Fprintf(w, "  GPUs %v are reachable only through the network and were trimmed from the search\n", t.Trimmed)
	}

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nGPUs\nGPU\tRANK\tDEV\tBUSID\tSM\tPCIe GB/s\tNVLink GB/s\tGDR\tNUMA")
	for _, g := range t.GPUs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%.1f\t%.1f\t%s\t%d\n", g.Index, g.Rank, g.Dev, g.BusID, g.SM, g.PCIBw, g.NVLinkBw, yesNo(g.GDR), g.CPU)
	}
	if len(t.NICs) > 0 {
		fmt.Fprintln(tw, "\nNICs\nNIC\tNAME\tDEV\tBUSID\tSPEED\tGB/s\tGDR\tLOCAL GPU")
		for _, n := range t.NICs {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d Mb/s\t%.1f\t%s\t%d\n", n.Index, n.Name, n.Dev, n.BusID, n.SpeedMbs, n.Bw, yesNo(n.GDR), n.LocalGPU)
		}
	}
	if t.GPUPairsOmitted > 0 {
		fmt.Fprintf(tw, "\nGPU pairs (same host): %d ordered pairs in %d classes; --full lists every pair\nCOUNT\tFIRST\tPATH\tGB/s\tTRANSPORT\tDETAIL\n",
			t.GPUPairsOmitted, len(t.GPUPairClasses))
		for _, c := range t.GPUPairClasses {
			fmt.Fprintf(tw, "%d\t%d->%d\t%s\t%.1f\t%s\t%s\n", c.Count, c.From, c.To, c.Path, c.Bw, c.Transport, strings.TrimSpace(c.Via+" "+c.Reason))
		}
	} else {
		fmt.Fprintln(tw, "\nGPU pairs (same host)\nFROM\tTO\tPATH\tGB/s\tTRANSPORT\tDETAIL")
	}
	for _, p := range t.GPUPairs {
		detail := p.Via
		if p.Reason != "" {
			detail = strings.TrimSpace(detail + " " + p.Reason)
		}
		if p.Path != p.DirectPath {
			detail = strings.TrimSpace(fmt.Sprintf("%s (direct path %s, rerouted through CPU)", detail, p.DirectPath))
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.1f\t%s\t%s\n", p.From, p.To, p.Path, p.Bw, p.Transport, detail)
	}
	if t.GPUNICsOmitted > 0 {
		fmt.Fprintf(tw, "\nGPU-NIC paths: %d paths in %d classes; --full lists every path\nCOUNT\tFIRST\tPATH\tGB/s\tGDR recv/send\tVIA\n",
			t.GPUNICsOmitted, len(t.GPUNICClasses))
		for _, c := range t.GPUNICClasses {
			via := ""
			if c.PXN {
				via = "PXN"
			}
			fmt.Fprintf(tw, "%d\t%d->NIC %d\t%s\t%.1f\t%s/%s\t%s\n", c.Count, c.GPU, c.NIC, c.Path, c.Bw, c.GDR, c.GDRRead, via)
		}
	}
	if len(t.GPUNICs) > 0 {
		fmt.Fprintln(tw, "\nGPU-NIC paths\nGPU\tNIC\tPATH\tGB/s\tGDR recv/send\tVIA")
		for _, p := range t.GPUNICs {
			via := ""
			if p.PXNVia != nil {
				via = fmt.Sprintf("PXN through GPU %d", *p.PXNVia)
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%.1f\t%s/%s\t%s\n", p.GPU, p.NIC, p.Path, p.Bw, p.GDR, p.GDRRead, via)
		}
	}
	if len(t.Remote) > 0 {
		fmt.Fprintf(tw, "\nGPU to any GPU on another host (%d hosts)\nGPU\tTRANSPORT\tNIC\tPATH\tGB/s\n", s.Hosts)
		for _, r := range t.Remote {
			nic := "none"
			if r.NIC >= 0 {
				nic = fmt.Sprintf("%d", r.NIC)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f\n", r.GPU, r.Transport, nic, r.Path, r.Bw)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nGraphs")
	for _, g := range t.Graphs {
		fmt.Fprintf(w, "  %s (id %d): %d channels (search %d), bw intra/inter %.2f/%.2f GB/s, type intra/inter %s/%s, sameChannels %d, crossNic %d, latencyInter %g us, %d steps",
			g.Pattern, g.ID, g.NChannels, g.SearchChannels, g.BwIntra, g.BwInter, g.TypeIntra, g.TypeInter, g.SameChannels, g.CrossNic, g.LatencyInter, g.Steps)
		if g.Fallback {
			fmt.Fprint(w, " (fallback: no solution found)")
		}
		fmt.Fprintln(w)
		for i, c := range g.Channels {
			var b strings.Builder
			fmt.Fprintf(&b, "    %2d:", i)
			if c.NetIn != nil {
				fmt.Fprintf(&b, " NET%d ->", *c.NetIn)
			}
			for _, r := range c.Ranks {
				fmt.Fprintf(&b, " %d", r)
			}
			if c.NetOut != nil {
				fmt.Fprintf(&b, " -> NET%d", *c.NetOut)
			}
			fmt.Fprintln(w, b.String())
		}
	}
	c := t.Comm
	fmt.Fprintf(w, "\nCommunicator: %d channels after ncclTopoPostset (ring/tree aligned to %d), NVLS %s, tree pattern %s, sm %d-%d, %d search steps\n",
		c.NChannels, c.CollChannels, yesNo(c.NVLSSupport), c.TreePattern, c.MinCompCap, c.MaxCompCap, c.SearchSteps)
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
