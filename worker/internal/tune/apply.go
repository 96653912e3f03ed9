package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memdecay/memdecay/worker/internal/adapter"
	"github.com/memdecay/memdecay/worker/internal/memdb"
	"github.com/memdecay/memdecay/worker/mapping"
)

// Change is one tier whose declared half-life an apply changed.
type Change struct {
	Tier string `json:"tier"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Apply writes half-lives (tier → "48h") into the [tiers] of the mapping
// the database declares, declaring it again under its own source in one
// transaction (so the next sweep computes every row on them), and returns
// what changed. A preset's tiers are refused: no file declares them.
func Apply(ctx context.Context, db *memdb.DB, halfLives map[string]string, now time.Time) ([]Change, error) {
	d, err := mapping.Load(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	if d.Preset != "" {
		return nil, fmt.Errorf("%w: the mapping in force is the preset %s (memworker's own tables or a known schema), "+
			"whose tiers are the reference's; declare the app's tables in a file with [tiers] (memworker map load) to change them", ErrPreset, d.Preset)
	}
	m := &mapping.Mapping{}
	if err := json.Unmarshal([]byte(d.JSON()), m); err != nil {
		return nil, fmt.Errorf("copying the declared mapping: %w", err)
	}
	if m.Tiers == nil {
		m.Tiers = mapping.Tiers{}
	}
	var changes []Change
	for _, tier := range Tunable {
		to, ok := halfLives[tier]
		if !ok || to == m.Tiers[tier] {
			continue
		}
		from := m.Tiers[tier]
		if from == "" {
			from = "the reference rate"
		}
		m.Tiers[tier] = to
		changes = append(changes, Change{Tier: tier, From: from, To: to})
	}
	if len(changes) == 0 {
		return nil, nil
	}
	if err := adapter.DeclareMapping(ctx, db, m, d.Source, now); err != nil {
		return nil, err
	}
	return changes, nil
}
