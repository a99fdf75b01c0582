package coordinator

import "testing"

// TestTaskInputCappedByFunctionMemory: coalescing, scan splits and task
// packs never give a task more input than its function's memory allows,
// whatever the settings say; a big function keeps the settings.
func TestTaskInputCappedByFunctionMemory(t *testing.T) {
	cases := []struct {
		name                            string
		memory                          int64
		target, maxSplit, pack          int64
		wantTarget, wantSplit, wantPack int64
	}{
		{"64 MiB function", 64 << 20, 64 << 20, 128 << 20, 16 << 20, 16 << 20, 16 << 20, 8 << 20},
		{"1 GiB function keeps the defaults", 1 << 30, 64 << 20, 128 << 20, 16 << 20, 64 << 20, 128 << 20, 16 << 20},
		{"small settings stay", 64 << 20, 4 << 20, 8 << 20, 1 << 20, 4 << 20, 8 << 20, 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeEnv(t, 1)
			cfg := testConfig("o")
			cfg.FunctionMemory = c.memory
			cfg.AQE.TargetPartitionBytes, cfg.AQE.MaxSplitBytes, cfg.PackBytes = c.target, c.maxSplit, c.pack
			co := e.coordinator(t, cfg)
			got := co.cfg
			if got.AQE.TargetPartitionBytes != c.wantTarget || got.AQE.MaxSplitBytes != c.wantSplit || got.PackBytes != c.wantPack {
				t.Fatalf("target %d, max split %d, pack %d; want %d, %d, %d", got.AQE.TargetPartitionBytes,
					got.AQE.MaxSplitBytes, got.PackBytes, c.wantTarget, c.wantSplit, c.wantPack)
			}
		})
	}
}
