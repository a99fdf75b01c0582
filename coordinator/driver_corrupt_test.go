package coordinator

import (
	"context"
	"strings"
	"testing"
)

// TestDriveCorruptRecordFailsJob: a job whose record does not decode fails
// with SL900 on the first drive, instead of staying running for every
// recovery to take, fail and give back while its client waits forever.
// (A plan that does not decode cannot be finished either: FinishJob needs
// it to find the stage keys; that record stays as it is, logged.)
func TestDriveCorruptRecordFailsJob(t *testing.T) {
	for _, tc := range []struct{ name, field, value string }{
		{"groups", "groups", "[[["},
		{"skipped", "skipped", "nope"},
		{"tasks", fieldTasks, `{"1":{"groups":7}}`},
		{"no task plans", "groups", "<absent>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFakeEnv(t, 2)
			c := e.coordinator(t, testConfig("c1"))
			ctx := context.Background()
			fields := map[string]any{"graph": `{"Stages":[]}`, "groups": "{}", "skipped": "{}", "round": "0"}
			fields[tc.field] = tc.value
			if tc.value == "<absent>" {
				delete(fields, tc.field)
			}
			job := "20260101-000000-0000000" + string(rune('a'+len(tc.name)%6))
			if err := c.store.CreateJob(ctx, job, fields); err != nil {
				t.Fatal(err)
			}
			if err := c.Drive(ctx, job); err != nil {
				t.Fatalf("drive: %v (want the job failed and recorded, not an error)", err)
			}
			m, err := c.store.Job(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			if m.State != StateFailed || m.Code != "SL900" || !strings.Contains(m.Error, "corrupt job record") {
				t.Fatalf("job %s code %s error %q: want failed SL900 corrupt job record", m.State, m.Code, m.Error)
			}
		})
	}
}
