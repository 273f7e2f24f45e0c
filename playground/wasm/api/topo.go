package api

import (
	"context"
	"strconv"

	"github.com/distributed-nav/distributed-nav/playground/figure"
	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Topo answers the topology page. The JSON holds "result" (exactly the
// object `ncclsim topo --json` prints for the same inputs), "channels"
// (how many channels each graph has), "problems" (environment warnings)
// and "command" (the ncclsim line); the figures are "topology" (the SVG
// with the chosen channels drawn), "matrix" (the path matrix) and
// "legend". On bad input the JSON is the error object of ErrorJSON.
func (s *Session) Topo(ctx context.Context, req *Request) Reply {
	b, err := s.build(ctx, req)
	if err != nil {
		return errorReply(err)
	}
	var w jw
	w.b = make([]byte, 0, 32<<10)
	w.obj()
	w.key("result")
	if err := writeTopoResult(&w, b); err != nil {
		return errorReply(err)
	}
	res := b.result()
	graphName := req.Graph
	if graphName == "" {
		graphName = "ring"
	}
	if graphName == "none" {
		graphName = ""
	}
	matrix, err := figure.PathMatrix(res)
	if err != nil {
		return errorReply(err)
	}
	figs := []Figure{
		{"topology", figure.Topology(res, figure.TopologyOptions{Graph: graphName, Channel: req.Channel, ID: "pg-topo"})},
		{"matrix", matrix},
		{"legend", figure.PathLegend()},
	}
	w.key("channels")
	w.obj()
	for _, g := range b.search.Graphs() {
		w.kint(graphKey(g.Pattern.String()), len(g.Channels))
	}
	w.end()
	w.key("problems")
	writeProblems(&w, b.problems)
	w.kstr("command", Command("topo", req))
	w.kf64("elapsed_ms", float64(b.elapsed.Microseconds())/1000)
	w.end()
	return Reply{JSON: w.String(), Figures: figs}
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

func optInt(w *jw, k string, v int) {
	if v >= 0 {
		w.kint(k, v)
	}
}

// writeTopoResult writes the object of `ncclsim topo --json`
// (playground/cmd/ncclsim/topo.go, buildTopoJSON), field for field.
func writeTopoResult(w *jw, b *built) error {
	a, res := b.analysis, b.search
	sys, paths := a.System, a.Paths
	arch, vendor, cpuModel := sys.CPUType()
	sc := res.Scalars()
	w.obj()
	w.key("system")
	w.obj()
	w.kstr("name", b.host.name)
	if b.host.desc != "" {
		w.kstr("description", b.host.desc)
	}
	w.kint("hosts", sys.Hosts)
	w.kint("ranks", sys.NRanks())
	w.kint("local_ranks", sys.LocalRanks())
	w.kstr("cpu_arch", arch.String())
	w.kstr("cpu_vendor", vendor.String())
	w.kstr("cpu_model", topo.ModelName(vendor, cpuModel))
	w.kint("cpus", sys.Count(topo.CPU))
	w.kbool("nvswitch", sys.Count(topo.NVS) > 0)
	w.kstr("p2p_support", sys.P2P.String())
	w.kstr("p2p_level", paths.P2PLevel().String())
	w.kbool("inter", a.Inter)
	w.kf32("max_bw", a.MaxBw)
	w.kf32("total_bw", a.TotalBw)
	w.end()
	if len(b.host.warns) > 0 {
		w.key("warnings")
		w.arr()
		for _, x := range b.host.warns {
			w.str(x.String())
		}
		w.endArr()
	}
	if len(res.Notes) > 0 {
		w.key("notes")
		w.strs(res.Notes)
	}
	w.key("gpus")
	w.arr()
	for i, g := range sys.GPUs() {
		var pciBw, nvlBw float32
		dev := sys.Node(topo.NodeRef{Type: topo.DEV, Index: g.GPU.Peer})
		for _, li := range dev.Links {
			switch lk := sys.Links[li]; lk.Type {
			case topo.LinkPCI:
				pciBw = lk.Bw
			case topo.LinkNVL:
				nvlBw += lk.Bw
			}
		}
		numa := -1
		if c := paths.LocalCPU(i); c >= 0 {
			numa = sys.Nodes[topo.CPU][c].CPU.NumaID
		}
		w.obj()
		w.kint("index", i)
		w.kint("rank", g.GPU.Rank)
		w.kint("dev", g.GPU.Dev)
		w.kstr("busid", g.BusID)
		w.kint("sm", g.GPU.SM)
		w.kbool("gdr", g.GPU.GDR)
		w.kf32("pci_bw", pciBw)
		w.kf32("nvlink_bw", nvlBw)
		w.kint("cpu_numa", numa)
		w.end()
	}
	w.endArr()
	w.key("nics")
	w.arr()
	for i, n := range sys.NETs() {
		w.obj()
		w.kint("index", i)
		w.kstr("name", n.Net.Name)
		w.kint("dev", n.Net.Dev)
		if n.BusID != "" {
			w.kstr("busid", n.BusID)
		}
		w.kint("speed_mbps", n.Net.SpeedMbs)
		w.kf32("bw", n.Net.Bw)
		w.kbool("gdr", n.Net.GDR)
		w.kint("local_gpu", paths.LocalGPU(i))
		w.end()
	}
	w.endArr()
	pairs, err := paths.GPUPairs()
	if err != nil {
		return err
	}
	w.key("gpu_pairs")
	w.arr()
	for _, p := range pairs {
		w.obj()
		w.kint("from", p.From)
		w.kint("to", p.To)
		w.kstr("path", p.Type.String())
		w.kf32("bw", p.Bw)
		w.kstr("transport", p.Transport.String())
		if p.Via != "" {
			w.kstr("via", p.Via)
		}
		optInt(w, "intermediate", p.Intermediate)
		if p.Read {
			w.kbool("p2p_read", true)
		}
		w.kstr("direct_path", p.DirectType.String())
		if p.Reason != "" {
			w.kstr("reason", p.Reason)
		}
		w.end()
	}
	w.endArr()
	w.key("gpu_nic_paths")
	w.arr()
	for _, p := range paths.GPUNetPairs() {
		w.obj()
		w.kint("gpu", p.GPU)
		w.kint("nic", p.Net)
		w.kstr("path", p.Type.String())
		w.kf32("bw", p.Bw)
		w.kstr("gdr_recv", p.GDR.String())
		w.kstr("gdr_send", p.GDRRead.String())
		optInt(w, "pxn_via", p.PXNPeer)
		w.end()
	}
	w.endArr()
	if sys.Hosts > 1 {
		w.key("remote")
		w.arr()
		for g := range sys.GPUs() {
			nic, path, bw := -1, topo.PathNET.String(), float32(0)
			if n := paths.LocalNet(g, 0); n >= 0 {
				q := paths.NetPath(g, n)
				nic, path, bw = n, q.Type.String(), q.Bw
			}
			w.obj()
			w.kint("gpu", g)
			w.kint("nic", nic)
			w.kstr("path", path)
			w.kf32("bw", bw)
			w.kstr("transport", topo.TransportNET.String())
			w.end()
		}
		w.endArr()
	}
	if len(a.Trimmed) > 0 {
		w.key("trimmed_gpus")
		w.ints(a.Trimmed)
	}
	w.key("graphs")
	w.arr()
	for _, g := range res.Graphs() {
		w.obj()
		w.kint("id", g.ID)
		w.kstr("pattern", g.Pattern.String())
		w.kint("n_channels", g.NChannels)
		w.kint("search_channels", g.SearchChannels)
		w.kf32("bw_intra", g.BwIntra)
		w.kf32("bw_inter", g.BwInter)
		w.kstr("type_intra", g.TypeIntra.String())
		w.kstr("type_inter", g.TypeInter.String())
		w.kint("same_channels", g.SameChannels)
		w.kint("cross_nic", g.CrossNic)
		w.kf32("latency_inter", g.LatencyInter)
		w.key("steps")
		w.i64(g.Steps)
		if g.Fallback {
			w.kbool("fallback", true)
		}
		w.key("channels")
		w.arr()
		for _, c := range g.Channels {
			w.obj()
			w.key("ranks")
			if c.Ranks == nil {
				w.null()
			} else {
				w.ints(c.Ranks)
			}
			optInt(w, "net_in", c.NetIn)
			optInt(w, "net_out", c.NetOut)
			w.end()
		}
		w.endArr()
		w.end()
	}
	w.endArr()
	w.key("comm")
	w.obj()
	w.kint("n_channels", res.NChannels)
	w.kint("coll_channels", res.CollChannels)
	w.kbool("nvls_support", res.NVLSSupport)
	w.kstr("max_tree_pattern", sc.MaxTreePattern.String())
	w.kint("min_comp_cap", sc.MinCompCap)
	w.kint("max_comp_cap", sc.MaxCompCap)
	w.key("search_steps")
	w.i64(res.Steps())
	w.end()
	w.end()
	return nil
}

// writeProblems writes environment findings as `ncclsim tune --json` does.
func writeProblems(w *jw, ps []ncclenv.Problem) {
	w.arr()
	for _, p := range ps {
		w.obj()
		w.kstr("name", p.Name)
		w.kstr("severity", p.Severity.String())
		w.kstr("kind", p.Kind.String())
		w.kstr("message", p.Message)
		if len(p.Suggestions) > 0 {
			w.key("suggestions")
			w.strs(p.Suggestions)
		}
		w.end()
	}
	w.endArr()
}

// itoa is strconv.Itoa.
func itoa(i int) string { return strconv.Itoa(i) }
