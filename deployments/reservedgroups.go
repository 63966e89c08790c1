package deployments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// reservedGroupsCollection holds the model group names the last ReloadGroups of any replica
// on the store swapped in (one record, reservedGroupsKey). It is not store.Deployments: a
// replica of an earlier build lists that collection and would read the record as a
// deployment.
const reservedGroupsCollection = store.DeploymentReservedGroups

// reservedGroupsKey is the key of the one record of reservedGroupsCollection.
const reservedGroupsKey = "model-groups"

// reservedGroups is that record: the names of the groups --model-groups gave at the last
// reload on any replica. A replica's /model/new reads it in its own transaction, so a
// deployment is never stored under a name a reload on another replica just took, before
// that replica's own reload (the same file read anew) makes the name its group too.
type reservedGroups struct {
	Names []string `json:"names"`
}

// reserveGroups records groups' names as the reloaded groups' in tx.
func reserveGroups(ctx context.Context, tx store.Tx, groups map[string]completions.ModelGroup) error {
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	sort.Strings(names)
	b, err := json.Marshal(reservedGroups{Names: names})
	if err != nil {
		return fmt.Errorf("deployments: %w", err)
	}
	if err := tx.Put(ctx, reservedGroupsCollection, reservedGroupsKey, b); err != nil {
		return fmt.Errorf("deployments: recording the reloaded model groups: %w", err)
	}
	return nil
}

// reservedGroup reports whether a reload on any replica of the store made name one of its
// --model-groups (none recorded before any reload: false).
func reservedGroup(ctx context.Context, r store.Reader, name string) (bool, error) {
	b, err := r.Get(ctx, reservedGroupsCollection, reservedGroupsKey)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deployments: reading the reloaded model groups: %w", err)
	}
	var rg reservedGroups
	if err := json.Unmarshal(b, &rg); err != nil {
		return false, fmt.Errorf("deployments: reading the reloaded model groups: %w", err)
	}
	return slices.Contains(rg.Names, name), nil
}
