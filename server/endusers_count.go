package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/switchyard-ai/switchyard/store"
)

// How many end users a key has is kept in a record of its own (store.EndUserCounts, keyed
// by the owner), written in the store transaction of every creation and deletion of one of
// them, so the bound on them (Config.MaxEndUsersPerKey) costs a new end user one record
// read, not a listing of every end user the key has. An owner whose end users an earlier
// build stored has no count: the first transaction that needs it counts them by listing
// (once) and stores the count. Reading and writing the count inside the transaction that
// makes or deletes end users keeps it exact: the stores serialise such transactions, so two
// making the last end users allowed cannot both pass.

// endUserCountPage is how many end users one listing reads when counting an owner's end
// users that have no count yet.
const endUserCountPage = 1000

// endUserTally is an owner's record in store.EndUserCounts.
type endUserTally struct {
	// Count is how many end users (records in store.EndUsers) the owner has.
	Count int `json:"count"`
}

// endUserCount returns how many end users owner has, read through rd (in a transaction
// that changes them, before it does): its count, or, when none is stored (end users of an
// earlier build) or it is not a count, the end users counted by listing them.
func endUserCount(ctx context.Context, rd store.Reader, owner string) (int, error) {
	t, err := store.GetJSON[endUserTally](ctx, rd, store.EndUserCounts, owner)
	switch {
	case err == nil && t.Count >= 0:
		return t.Count, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return 0, fmt.Errorf("server: reading the end user count of %s: %w", owner, err)
	}
	n, after := 0, ""
	for {
		es, err := rd.List(ctx, store.EndUsers, store.ListOptions{Prefix: owner + "/", After: after, Limit: endUserCountPage})
		if err != nil {
			return 0, fmt.Errorf("server: counting end users: %w", err)
		}
		n += len(es)
		if len(es) < endUserCountPage {
			return n, nil
		}
		after = es[len(es)-1].Key
	}
}

// putEndUserCount stores n as owner's end user count in tx (the transaction that made or
// deleted end users to leave n).
func putEndUserCount(ctx context.Context, tx store.Tx, owner string, n int) error {
	if err := store.PutJSON(ctx, tx, store.EndUserCounts, owner, endUserTally{Count: max(n, 0)}); err != nil {
		return fmt.Errorf("server: storing the end user count of %s: %w", owner, err)
	}
	return nil
}

// endUserRoom returns how many end users owner has (read through rd, in the transaction
// that adds them, before it does) and refuses, with a 400 naming field, adding adding
// more past Config.MaxEndUsersPerKey.
func (s *Server) endUserRoom(ctx context.Context, rd store.Reader, owner, field string, adding int) (int, error) {
	have, err := endUserCount(ctx, rd, owner)
	if err != nil {
		return 0, err
	}
	most := s.cfg.MaxEndUsersPerKey
	if most < 0 || adding == 0 || have+adding <= most {
		return have, nil
	}
	e := Errorf(http.StatusBadRequest, KindBadRequest, "%s: this key has %d end users, the most it may have (--end-users-per-key): delete some (POST /customer/delete) before naming new ones", field, have)
	e.Param = field
	return 0, e
}
