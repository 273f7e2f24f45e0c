package service

import (
	"context"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// TopoResult is the answer to the topology question, the object
// `ncclsim topo --json` prints: the system, its GPUs and NICs, the path
// and transport between GPUs, and each searched graph.
//
// GPUPairClasses groups the ordered GPU pairs by how they are reached (a
// handful of classes on real hosts) and is always filled. GPUPairs lists
// every pair only up to topo.MaxListedGPUs GPUs per host, or with
// Request.Full; beyond it the list is empty and GPUPairsOmitted says how
// many pairs the classes stand for, so a 512-GPU host answers with a few
// classes instead of 261,632 rows.
type (
	TopoResult struct {
		Checked  `json:"-"`
		System   SystemInfo `json:"system"`
		Warnings []string   `json:"warnings,omitempty"`
		Notes    []string   `json:"notes,omitempty"`
		GPUs     []GPU      `json:"gpus"`
		NICs     []NIC      `json:"nics"`
		GPUPairs []GPUPair  `json:"gpu_pairs"`
		// GPUPairClasses and GPUPairsOmitted: see the type's doc.
		GPUPairClasses  []GPUPairClass `json:"gpu_pair_classes"`
		GPUPairsOmitted int            `json:"gpu_pairs_omitted,omitempty"`
		GPUNICs         []GPUNICPath   `json:"gpu_nic_paths"`
		// GPUNICClasses groups the GPU-NIC paths the same way (always
		// filled); GPUNICs lists them only up to topo.MaxListedGPUNICs
		// paths or with Request.Full, else GPUNICsOmitted counts them.
		GPUNICClasses  []GPUNICClass `json:"gpu_nic_classes"`
		GPUNICsOmitted int           `json:"gpu_nics_omitted,omitempty"`
		Remote         []RemotePath  `json:"remote,omitempty"`
		Trimmed        []int         `json:"trimmed_gpus,omitempty"`
		Graphs         []Graph       `json:"graphs"`
		Comm           Comm          `json:"comm"`
	}
	SystemInfo struct {
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
	GPU struct {
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
	NIC struct {
		Index    int     `json:"index"`
		Name     string  `json:"name"`
		Dev      int     `json:"dev"`
		BusID    string  `json:"busid,omitempty"`
		SpeedMbs int     `json:"speed_mbps"`
		Bw       float32 `json:"bw"`
		GDR      bool    `json:"gdr"`
		LocalGPU int     `json:"local_gpu"`
	}
	GPUPair struct {
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
	// GPUPairClass is one class of topo.SummarizePairs: Count ordered pairs
	// reached the same way, the first of them From -> To.
	GPUPairClass struct {
		Path      string  `json:"path"`
		Bw        float32 `json:"bw"`
		Transport string  `json:"transport"`
		Via       string  `json:"via,omitempty"`
		Reason    string  `json:"reason,omitempty"`
		Count     int     `json:"count"`
		From      int     `json:"from"`
		To        int     `json:"to"`
	}
	GPUNICPath struct {
		GPU     int     `json:"gpu"`
		NIC     int     `json:"nic"`
		Path    string  `json:"path"`
		Bw      float32 `json:"bw"`
		GDR     string  `json:"gdr_recv"`
		GDRRead string  `json:"gdr_send"`
		PXNVia  *int    `json:"pxn_via,omitempty"`
	}
	// GPUNICClass is one class of topo.SummarizeNetPairs: Count GPU-NIC
	// paths reached the same way, the first of them GPU -> NIC.
	GPUNICClass struct {
		Path    string  `json:"path"`
		Bw      float32 `json:"bw"`
		GDR     string  `json:"gdr_recv"`
		GDRRead string  `json:"gdr_send"`
		PXN     bool    `json:"pxn,omitempty"`
		Count   int     `json:"count"`
		GPU     int     `json:"gpu"`
		NIC     int     `json:"nic"`
	}
	RemotePath struct {
		GPU       int     `json:"gpu"`
		NIC       int     `json:"nic"`
		Path      string  `json:"path"`
		Bw        float32 `json:"bw"`
		Transport string  `json:"transport"`
	}
	Channel struct {
		Ranks  []int `json:"ranks"`
		NetIn  *int  `json:"net_in,omitempty"`
		NetOut *int  `json:"net_out,omitempty"`
	}
	Graph struct {
		ID             int       `json:"id"`
		Pattern        string    `json:"pattern"`
		NChannels      int       `json:"n_channels"`
		SearchChannels int       `json:"search_channels"`
		BwIntra        float32   `json:"bw_intra"`
		BwInter        float32   `json:"bw_inter"`
		TypeIntra      string    `json:"type_intra"`
		TypeInter      string    `json:"type_inter"`
		SameChannels   int       `json:"same_channels"`
		CrossNic       int       `json:"cross_nic"`
		LatencyInter   float32   `json:"latency_inter"`
		Steps          int64     `json:"steps"`
		Fallback       bool      `json:"fallback,omitempty"`
		Channels       []Channel `json:"channels"`
	}
	Comm struct {
		NChannels    int    `json:"n_channels"`
		CollChannels int    `json:"coll_channels"`
		NVLSSupport  bool   `json:"nvls_support"`
		TreePattern  string `json:"max_tree_pattern"`
		MinCompCap   int    `json:"min_comp_cap"`
		MaxCompCap   int    `json:"max_comp_cap"`
		SearchSteps  int64  `json:"search_steps"`
	}
)

// intPtr is v, or nil for NCCL's "none" (-1).
func intPtr(v int) *int {
	if v < 0 {
		return nil
	}
	return &v
}

// Topo answers the topology question for req (system fields and Timeout).
func (s *Service) Topo(ctx context.Context, req *Request) (*TopoResult, error) {
	b, err := s.build(ctx, req)
	if err != nil {
		return nil, err
	}
	return newTopoResult(b, req.Full)
}

// newTopoResult assembles the answer; full lists every GPU pair whatever
// the host's size.
func newTopoResult(b *built, full bool) (*TopoResult, error) {
	a, res := b.res.Analysis, b.res.Search
	sys, paths := a.System, a.Paths
	arch, vendor, model := sys.CPUType()
	sc := res.Scalars()
	out := &TopoResult{
		Checked: b.checked(),
		System: SystemInfo{Name: b.host.name, Description: b.host.desc, Hosts: sys.Hosts, Ranks: sys.NRanks(),
			LocalRanks: sys.LocalRanks(), CPUArch: arch.String(), CPUVendor: vendor.String(),
			CPUModel: topo.ModelName(vendor, model), CPUs: sys.Count(topo.CPU), NVSwitch: sys.Count(topo.NVS) > 0,
			P2PSupport: sys.P2P.String(), P2PLevel: paths.P2PLevel().String(), Inter: a.Inter,
			MaxBw: a.MaxBw, TotalBw: a.TotalBw},
		Notes:   res.Notes,
		Trimmed: a.Trimmed,
		Comm: Comm{NChannels: res.NChannels, CollChannels: res.CollChannels, NVLSSupport: res.NVLSSupport,
			TreePattern: sc.MaxTreePattern.String(), MinCompCap: sc.MinCompCap, MaxCompCap: sc.MaxCompCap,
			SearchSteps: res.Steps()},
		GPUs: []GPU{}, NICs: []NIC{}, GPUPairs: []GPUPair{}, GPUPairClasses: []GPUPairClass{}, GPUNICs: []GPUNICPath{},
		GPUNICClasses: []GPUNICClass{},
	}
	for _, w := range b.host.warns {
		out.Warnings = append(out.Warnings, w.String())
	}
	for i, g := range sys.GPUs() {
		gj := GPU{Index: i, Rank: g.GPU.Rank, Dev: g.GPU.Dev, BusID: g.BusID, SM: g.GPU.SM, GDR: g.GPU.GDR, CPU: -1}
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
		out.NICs = append(out.NICs, NIC{Index: i, Name: n.Net.Name, Dev: n.Net.Dev, BusID: n.BusID,
			SpeedMbs: n.Net.SpeedMbs, Bw: n.Net.Bw, GDR: n.Net.GDR, LocalGPU: paths.LocalGPU(i)})
	}
	pairs, err := paths.GPUPairs()
	if err != nil {
		return nil, err
	}
	for _, c := range topo.SummarizePairs(pairs) {
		out.GPUPairClasses = append(out.GPUPairClasses, GPUPairClass{Path: c.Type.String(), Bw: c.Bw,
			Transport: c.Transport.String(), Via: c.Via, Reason: c.Reason, Count: c.Count, From: c.First.From, To: c.First.To})
	}
	if !full && len(sys.GPUs()) > topo.MaxListedGPUs {
		out.GPUPairsOmitted, pairs = len(pairs), nil
	}
	for _, p := range pairs {
		out.GPUPairs = append(out.GPUPairs, GPUPair{From: p.From, To: p.To, Path: p.Type.String(), Bw: p.Bw,
			Transport: p.Transport.String(), Via: p.Via, Intermediate: intPtr(p.Intermediate), P2PRead: p.Read,
			DirectPath: p.DirectType.String(), Reason: p.Reason})
	}
	netPairs := paths.GPUNetPairs()
	for _, c := range topo.SummarizeNetPairs(netPairs) {
		out.GPUNICClasses = append(out.GPUNICClasses, GPUNICClass{Path: c.Type.String(), Bw: c.Bw, GDR: c.GDR.String(),
			GDRRead: c.GDRRead.String(), PXN: c.PXN, Count: c.Count, GPU: c.First.GPU, NIC: c.First.Net})
	}
	if !full && len(netPairs) > topo.MaxListedGPUNICs {
		out.GPUNICsOmitted, netPairs = len(netPairs), nil
	}
	for _, p := range netPairs {
		out.GPUNICs = append(out.GPUNICs, GPUNICPath{GPU: p.GPU, NIC: p.Net, Path: p.Type.String(), Bw: p.Bw,
			GDR: p.GDR.String(), GDRRead: p.GDRRead.String(), PXNVia: intPtr(p.PXNPeer)})
	}
	if sys.Hosts > 1 {
		for g := range sys.GPUs() {
			r := RemotePath{GPU: g, NIC: -1, Path: topo.PathNET.String(), Transport: topo.TransportNET.String()}
			if n := paths.LocalNet(g, 0); n >= 0 {
				q := paths.NetPath(g, n)
				r.NIC, r.Path, r.Bw = n, q.Type.String(), q.Bw
			}
			out.Remote = append(out.Remote, r)
		}
	}
	for _, g := range res.Graphs() {
		gj := Graph{ID: g.ID, Pattern: g.Pattern.String(), NChannels: g.NChannels, SearchChannels: g.SearchChannels,
			BwIntra: g.BwIntra, BwInter: g.BwInter, TypeIntra: g.TypeIntra.String(), TypeInter: g.TypeInter.String(),
			SameChannels: g.SameChannels, CrossNic: g.CrossNic, LatencyInter: g.LatencyInter, Steps: g.Steps,
			Fallback: g.Fallback, Channels: []Channel{}}
		for _, c := range g.Channels {
			gj.Channels = append(gj.Channels, Channel{Ranks: c.Ranks, NetIn: intPtr(c.NetIn), NetOut: intPtr(c.NetOut)})
		}
		out.Graphs = append(out.Graphs, gj)
	}
	return out, nil
}

// TopoPage is the topology page's answer: Result, how many channels each
// graph has (for the channel selector), the environment problems, the
// ncclsim line and the search time; the figures are "topology" (the SVG
// with the chosen channels drawn), "matrix" (the path matrix) and "legend".
type TopoPage struct {
	Result    *TopoResult    `json:"result"`
	Channels  map[string]int `json:"channels"`
	Problems  []Problem      `json:"problems"`
	Command   string         `json:"command"`
	ElapsedMs float64        `json:"elapsed_ms"`
	Figures   []Figure       `json:"-"`
}

// TopoPage answers the topology page for req (Graph and Channel choose
// the channels drawn: "ring" by default, "none" for none).
func (s *Service) TopoPage(ctx context.Context, req *Request) (*TopoPage, error) {
	b, err := s.build(ctx, req)
	if err != nil {
		return nil, err
	}
	r, err := newTopoResult(b, req.Full)
	if err != nil {
		return nil, err
	}
	res := b.res
	graphName := req.Graph
	if graphName == "" {
		graphName = "ring"
	}
	if graphName == "none" {
		graphName = ""
	}
	matrix, err := figure.PathMatrix(res)
	if err != nil {
		return nil, err
	}
	p := &TopoPage{Result: r, Channels: map[string]int{}, Problems: problems(b.problems), Command: commandLine("topo", req, nil),
		ElapsedMs: float64(b.elapsed.Microseconds()) / 1000,
		Figures: []Figure{
			{"topology", figure.Topology(res, figure.TopologyOptions{Graph: graphName, Channel: req.Channel, ID: "pg-topo"})},
			{"matrix", matrix},
			{"legend", figure.PathLegend()},
		}}
	for _, g := range res.Search.Graphs() {
		p.Channels[graphKey(g.Pattern.String())] = len(g.Channels)
	}
	return p, nil
}

// graphKey maps a pattern name onto the graph selector's values.
func graphKey(p string) string {
	switch p {
	case "RING":
		return "ring"
	case "NVLS":
		return "nvls"
	}
	return "tree"
}

// Problem is an ncclenv.Problem as the JSON results carry it.
type Problem struct {
	Name        string   `json:"name"`
	Severity    string   `json:"severity"`
	Kind        string   `json:"kind"`
	Message     string   `json:"message"`
	Suggestions []string `json:"suggestions,omitempty"`
}

// problems converts environment findings (never nil, so that JSON has []).
func problems(ps []ncclenv.Problem) []Problem {
	out := []Problem{}
	for _, p := range ps {
		out = append(out, Problem{p.Name, p.Severity.String(), p.Kind.String(), p.Message, p.Suggestions})
	}
	return out
}

// envMap is env as a JSON object (encoding/json sorts the keys).
func envMap(e ncclenv.Env) map[string]string {
	m := map[string]string{}
	for _, n := range e.Names() {
		v, _ := e.Lookup(n)
		m[n] = v
	}
	return m
}

// Checked is what the service made of a system request that the JSON
// results do not carry: the topology parser's warnings and every
// environment finding (warnings only; errors fail the request). ncclsim
// prints them to standard error.
type Checked struct {
	Warnings []topo.Warning
	Problems []ncclenv.Problem
}

// checked returns the Checked of b.
func (b *built) checked() Checked {
	return Checked{Warnings: b.host.warns, Problems: b.problems}
}
