package doctor

// Site-relative pages and anchors the diagnoses link to. The anchors are the
// {#id} attributes of the headings in content/notes (checked by
// TestLinkAnchorsExist), and /env/#NAME is the row of the variable table.
const (
	troubleshootingPage = "/notes/troubleshooting/"
	hardwarePage        = "/notes/hardware/"
	ncclNotesPage       = "/notes/nccl-internals-architecture-deep-dive/"
	torchNotesPage      = "/notes/pytorch-torch-distributed-internals-deep-dive/"
	envPage             = "/env/"
	// estimatorPage is the playground's estimator; its query parameters
	// are the page's own inputs (preset, nodes, coll, bytes).
	estimatorPage = "/playground/estimator/"
)

func note(page, anchor, title string) Link {
	if anchor == "" {
		return Link{Title: title, URL: page}
	}
	return Link{Title: title, URL: page + "#" + anchor}
}

func trouble(anchor, title string) Link { return note(troubleshootingPage, anchor, title) }

// envLink links the row of one variable in the site's variable table.
//
//go:noinline
func envLink(name string) Link { return Link{Title: name, URL: envPage + "#" + name} }

var (
	linkTimeout       = trouble("nccl-timeout", "NCCL timeout and the watchdog")
	linkHeartbeat     = trouble("heartbeat-monitor", "Watchdog hang and the heartbeat monitor")
	linkP2P           = trouble("p2p-silently-disabled", "P2P silently disabled")
	linkPCIe4090      = trouble("pcie-scaling-4090", "PCIe scaling on RTX 4090")
	linkSHM           = trouble("shm-transport", "SHM transport on RTX 4090")
	linkNIC           = trouble("nic-wrong-socket", "NIC on the wrong socket, or NET/Socket instead of InfiniBand")
	linkChannels      = trouble("fewer-channels", "Fewer channels than expected")
	linkVersions      = trouble("nccl-version-mismatch", "Mismatched NCCL versions across ranks")
	linkDevShm        = trouble("dev-shm-too-small", "/dev/shm too small in containers")
	linkMismatched    = trouble("mismatched-collectives", "Hangs from mismatched collectives")
	linkIgnoredEnv    = trouble("ignored-env-vars", "Environment variables silently ignored")
	linkTroubleshoot  = trouble("", "Troubleshooting NCCL and torch.distributed")
	linkCrossSocket   = note(hardwarePage, "rtx-4090-cross-socket", "The cross-socket rule")
	linkGPUNIC        = note(hardwarePage, "gpu-nic-affinity", "GPU–NIC affinity and GPUDirect RDMA")
	linkNetSocketHW   = note(hardwarePage, "net-socket", "Falling back to NET/Socket")
	linkTransportSel  = note(ncclNotesPage, "transport-selection", "Transport selection order")
	linkChannelsRings = note(ncclNotesPage, "channels-and-rings", "Channels, rings and postset")
	linkEnvKnobs      = note(ncclNotesPage, "env-knobs", "The knobs that matter")
	linkWatchdogNote  = note(torchNotesPage, "watchdog", "Watchdog thread")
	linkHeartbeatNote = note(torchNotesPage, "heartbeatmonitor", "HeartbeatMonitor")
	linkTopologyNote  = note(ncclNotesPage, "topology-pipeline", "The topology pipeline: XML, paths, trim")
)

// catalogue lists every page link the diagnoses and findings use; the
// tests check each against the notes' headings.
func catalogue() []Link {
	return []Link{linkTimeout, linkHeartbeat, linkP2P, linkPCIe4090, linkSHM, linkNIC, linkChannels, linkVersions,
		linkDevShm, linkMismatched, linkIgnoredEnv, linkTroubleshoot, linkCrossSocket, linkGPUNIC, linkNetSocketHW,
		linkTransportSel, linkChannelsRings, linkEnvKnobs, linkWatchdogNote, linkHeartbeatNote, linkTopologyNote}
}

// links assembles a link list, dropping duplicates. Like envLink it stays
// out of line (go:noinline) to keep the wasm playground small: each is
// called from dozens of places.
//
//go:noinline
func links(ls ...Link) []Link {
	out := make([]Link, 0, len(ls))
	seen := map[string]bool{}
	for _, l := range ls {
		if !seen[l.URL] {
			seen[l.URL] = true
			out = append(out, l)
		}
	}
	return out
}
