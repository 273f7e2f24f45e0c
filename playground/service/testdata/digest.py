#!/usr/bin/env python3
# digest.py DIR > presets.golden.json: condenses the `ncclsim ... --json`
# outputs DIR/<preset>-{topo,tune,estimate,step}.json into the per-preset
# numbers TestPresetGolden pins (see preset_golden_test.go for how DIR was
# made: with the ncclsim binary built before package service existed).
import json, os, sys
d = sys.argv[1]
names = sorted({f.rsplit('-', 1)[0] for f in os.listdir(d) if f.endswith('.json')})
out = {}
for p in names:
    topo = json.load(open(f'{d}/{p}-topo.json'))
    tune = json.load(open(f'{d}/{p}-tune.json'))
    est = json.load(open(f'{d}/{p}-estimate.json'))
    step = json.load(open(f'{d}/{p}-step.json'))
    out[p] = {
        'ranks': topo['system']['ranks'],
        'p2p_level': topo['system']['p2p_level'],
        'graphs': [[g['pattern'], g['n_channels'], g['bw_intra'], g['bw_inter'], g['type_intra'] + '/' + g['type_inter']] for g in topo['graphs']],
        'pairs': sorted({f"{x['path']} {x['transport']}" for x in topo['gpu_pairs']}),
        'comm_nchannels': tune['comm_nchannels'],
        'selection': [[r['bytes'], r['algo'] + '/' + r['proto'], r['nchannels'], r['time_us']] for r in tune['selection']],
        'estimate_model_us': est['model']['time_us'],
        'estimate_calibrated_us': est['time_us'],
        'estimate_class': est['calibrated']['class'],
        'step_ms': step['ddp']['step_ms'],
        'speedup': step['ddp']['speedup'],
    }
json.dump(out, sys.stdout, sort_keys=True, separators=(',', ':'))
print()
