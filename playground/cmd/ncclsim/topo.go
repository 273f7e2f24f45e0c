package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/distributed-nav/distributed-nav/playground/graph"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// JSON shapes of "ncclsim topo --json".
type (
	topoJSON struct {
		System   systemJSON  `json:"system"`
		Warnings []string    `json:"warnings,omitempty"`
		Notes    []string    `json:"notes,omitempty"`
		GPUs     []gpuJSON   `json:"gpus"`
		NICs     []nicJSON   `json:"nics"`
		GPUPairs []pairJSON  `json:"gpu_pairs"`
		GPUNICs  []netJSON   `json:"gpu_nic_paths"`
		Remote   []remote    `json:"remote,omitempty"`
		Trimmed  []int       `json:"trimmed_gpus,omitempty"`
		Graphs   []graphJSON `json:"graphs"`
		Comm     commJSON    `json:"comm"`
	}
	systemJSON struct {
		Name        string  `json:"name"`
		Description string  `json:"description,omitempty"`
		Hosts       int     `json:"hosts"`
		Ranks       int     `json:"ranks"`
		LocalRanks  int     `json:"local_ranks"`
		CPUArch     string  `json:"cpu_arch"`
		CPUVendor   string  `json:"cpu_vendor"`
		CPUModel    string  `json:"cpu_model"`
		CPUs        int     `json:"cpus"`
		NVSwitch    bool    `json:"nvswitch"`
		P2PSupport  string  `json:"p2p_support"`
		P2PLevel    string  `json:"p2p_level"`
		Inter       bool    `json:"inter"`
		MaxBw       float32 `json:"max_bw"`
		TotalBw     float32 `json:"total_bw"`
	}
	gpuJSON struct {
		Index    int     `json:"index"`
		Rank     int     `json:"rank"`
		Dev      int     `json:"dev"`
		BusID    string  `json:"busid"`
		SM       int     `json:"sm"`
		GDR      bool    `json:"gdr"`
		PCIBw    float32 `json:"pci_bw"`
		NVLinkBw float32 `json:"nvlink_bw"`
		CPU      int     `json:"cpu_numa"`
	}
	nicJSON struct {
		Index    int     `json:"index"`
		Name     string  `json:"name"`
		Dev      int     `json:"dev"`
		BusID    string  `json:"busid,omitempty"`
		SpeedMbs int     `json:"speed_mbps"`
		Bw       float32 `json:"bw"`
		GDR      bool    `json:"gdr"`
		LocalGPU int     `json:"local_gpu"`
	}
	pairJSON struct {
		From         int     `json:"from"`
		To           int     `json:"to"`
		Path         string  `json:"path"`
		Bw           float32 `json:"bw"`
		Transport    string  `json:"transport"`
		Via          string  `json:"via,omitempty"`
		Intermediate *int    `json:"intermediate,omitempty"`
		P2PRead      bool    `json:"p2p_read,omitempty"`
		DirectPath   string  `json:"direct_path"`
		Reason       string  `json:"reason,omitempty"`
	}
	netJSON struct {
		GPU     int     `json:"gpu"`
		NIC     int     `json:"nic"`
		Path    string  `json:"path"`
		Bw      float32 `json:"bw"`
		GDR     string  `json:"gdr_recv"`
		GDRRead string  `json:"gdr_send"`
		PXNVia  *int    `json:"pxn_via,omitempty"`
	}
	remote struct {
		GPU       int     `json:"gpu"`
		NIC       int     `json:"nic"`
		Path      string  `json:"path"`
		Bw        float32 `json:"bw"`
		Transport string  `json:"transport"`
	}
	channelJSON struct {
		Ranks  []int `json:"ranks"`
		NetIn  *int  `json:"net_in,omitempty"`
		NetOut *int  `json:"net_out,omitempty"`
	}
	graphJSON struct {
		ID             int           `json:"id"`
		Pattern        string        `json:"pattern"`
		NChannels      int           `json:"n_channels"`
		SearchChannels int           `json:"search_channels"`
		BwIntra        float32       `json:"bw_intra"`
		BwInter        float32       `json:"bw_inter"`
		TypeIntra      string        `json:"type_intra"`
		TypeInter      string        `json:"type_inter"`
		SameChannels   int           `json:"same_channels"`
		CrossNic       int           `json:"cross_nic"`
		LatencyInter   float32       `json:"latency_inter"`
		Steps          int64         `json:"steps"`
		Fallback       bool          `json:"fallback,omitempty"`
		Channels       []channelJSON `json:"channels"`
	}
	commJSON struct {
		NChannels    int    `json:"n_channels"`
		CollChannels int    `json:"coll_channels"`
		NVLSSupport  bool   `json:"nvls_support"`
		TreePattern  string `json:"max_tree_pattern"`
		MinCompCap   int    `json:"min_comp_cap"`
		MaxCompCap   int    `json:"max_comp_cap"`
		SearchSteps  int64  `json:"search_steps"`
	}
)

func intPtr(v int) *int {
	if v < 0 {
		return nil
	}
	return &v
}

// runTopo implements `ncclsim topo`; stdin is read for "-" file names.
func runTopo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("topo", stderr)
	var sf systemFlags
	sf.register(fs)
	timeout := fs.Duration("timeout", 30*time.Second, "give up the graph search after this long")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l, err := sf.load(stdin, stderr)
	if err != nil {
		return err
	}
	sys, err := l.host.Replicate(l.nodes)
	if err != nil {
		return err
	}
	a, err := topo.Analyze(sys, l.env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, err := graph.SearchAll(ctx, a, l.env)
	if err != nil {
		return err
	}
	out, err := buildTopoJSON(l, a, res)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return printTopo(stdout, out)
}

func buildTopoJSON(l *loadedSystem, a *topo.Analysis, res *graph.Result) (*topoJSON, error) {
	sys, paths := a.System, a.Paths
	arch, vendor, model := sys.CPUType()
	sc := res.Scalars()
	out := &topoJSON{
		System: systemJSON{Name: l.name, Description: l.description, Hosts: sys.Hosts, Ranks: sys.NRanks(),
			LocalRanks: sys.LocalRanks(), CPUArch: arch.String(), CPUVendor: vendor.String(),
			CPUModel: topo.ModelName(vendor, model), CPUs: sys.Count(topo.CPU), NVSwitch: sys.Count(topo.NVS) > 0,
			P2PSupport: sys.P2P.String(), P2PLevel: paths.P2PLevel().String(), Inter: a.Inter,
			MaxBw: a.MaxBw, TotalBw: a.TotalBw},
		Notes:   res.Notes,
		Trimmed: a.Trimmed,
		Comm: commJSON{NChannels: res.NChannels, CollChannels: res.CollChannels, NVLSSupport: res.NVLSSupport,
			TreePattern: sc.MaxTreePattern.String(), MinCompCap: sc.MinCompCap, MaxCompCap: sc.MaxCompCap,
			SearchSteps: res.Steps()},
		GPUs: []gpuJSON{}, NICs: []nicJSON{}, GPUPairs: []pairJSON{}, GPUNICs: []netJSON{},
	}
	for _, w := range l.warnings {
		out.Warnings = append(out.Warnings, w.String())
	}
	for i, g := range sys.GPUs() {
		gj := gpuJSON{Index: i, Rank: g.GPU.Rank, Dev: g.GPU.Dev, BusID: g.BusID, SM: g.GPU.SM, GDR: g.GPU.GDR, CPU: -1}
		dev := sys.Node(topo.NodeRef{Type: topo.DEV, Index: g.GPU.Peer})
		for _, li := range dev.Links {
			switch lk := sys.Links[li]; lk.Type {
			case topo.LinkPCI:
				gj.PCIBw = lk.Bw
			case topo.LinkNVL:
				gj.NVLinkBw += lk.Bw
			}
		}
		if c := paths.LocalCPU(i); c >= 0 {
			gj.CPU = sys.Nodes[topo.CPU][c].CPU.NumaID
		}
		out.GPUs = append(out.GPUs, gj)
	}
	for i, n := range sys.NETs() {
		out.NICs = append(out.NICs, nicJSON{Index: i, Name: n.Net.Name, Dev: n.Net.Dev, BusID: n.BusID,
			SpeedMbs: n.Net.SpeedMbs, Bw: n.Net.Bw, GDR: n.Net.GDR, LocalGPU: paths.LocalGPU(i)})
	}
	pairs, err := paths.GPUPairs()
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		out.GPUPairs = append(out.GPUPairs, pairJSON{From: p.From, To: p.To, Path: p.Type.String(), Bw: p.Bw,
			Transport: p.Transport.String(), Via: p.Via, Intermediate: intPtr(p.Intermediate), P2PRead: p.Read,
			DirectPath: p.DirectType.String(), Reason: p.Reason})
	}
	for _, p := range paths.GPUNetPairs() {
		out.GPUNICs = append(out.GPUNICs, netJSON{GPU: p.GPU, NIC: p.Net, Path: p.Type.String(), Bw: p.Bw,
			GDR: p.GDR.String(), GDRRead: p.GDRRead.String(), PXNVia: intPtr(p.PXNPeer)})
	}
	if sys.Hosts > 1 {
		for g := range sys.GPUs() {
			r := remote{GPU: g, NIC: -1, Path: topo.PathNET.String(), Transport: topo.TransportNET.String()}
			if n := paths.LocalNet(g, 0); n >= 0 {
				q := paths.NetPath(g, n)
				r.NIC, r.Path, r.Bw = n, q.Type.String(), q.Bw
			}
			out.Remote = append(out.Remote, r)
		}
	}
	for _, g := range res.Graphs() {
		gj := graphJSON{ID: g.ID, Pattern: g.Pattern.String(), NChannels: g.NChannels, SearchChannels: g.SearchChannels,
			BwIntra: g.BwIntra, BwInter: g.BwInter, TypeIntra: g.TypeIntra.String(), TypeInter: g.TypeInter.String(),
			SameChannels: g.SameChannels, CrossNic: g.CrossNic, LatencyInter: g.LatencyInter, Steps: g.Steps,
			Fallback: g.Fallback, Channels: []channelJSON{}}
		for _, c := range g.Channels {
			gj.Channels = append(gj.Channels, channelJSON{Ranks: c.Ranks, NetIn: intPtr(c.NetIn), NetOut: intPtr(c.NetOut)})
		}
		out.Graphs = append(out.Graphs, gj)
	}
	return out, nil
}

func printTopo(w io.Writer, t *topoJSON) error {
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
	fmt.Fprintln(tw, "\nGPU pairs (same host)\nFROM\tTO\tPATH\tGB/s\tTRANSPORT\tDETAIL")
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
