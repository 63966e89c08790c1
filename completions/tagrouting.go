package completions

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// DefaultTag marks the members of a tag-filtered model group that requests without tags
// use (LiteLLM's tags: ["default"]).
const DefaultTag = "default"

// ErrTagRouting is matched by *TagRoutingError.
var ErrTagRouting = errors.New("completions: no deployment of the model group carries the request's tags")

// TagRoutingError refuses a request to a tag-filtered model group (ModelGroup.TagFiltering)
// none of whose members its tags select: LiteLLM's "Not allowed to access model due to tags
// configuration" (which its proxy answers with a 401). It matches ErrTagRouting. A group's
// fallbacks (and the request's fallback_models) that fit the tags are tried first: the
// error is answered when none does, as with several groups none of which fits.
type TagRoutingError struct {
	// Model is the model group the request named (several: joined by commas).
	Model string
	// Tags are the request's tags (none for a request without tags).
	Tags []string
}

// Error gives LiteLLM's words, naming the model group and the tags as LiteLLM's Python does.
func (e *TagRoutingError) Error() string {
	quoted := make([]string, len(e.Tags))
	for i, t := range e.Tags {
		quoted[i] = "'" + t + "'"
	}
	return fmt.Sprintf("Not allowed to access model due to tags configuration. Passed model=%s and tags=[%s]", e.Model, strings.Join(quoted, ", "))
}

// Is reports whether target is ErrTagRouting.
func (e *TagRoutingError) Is(target error) bool { return target == ErrTagRouting }

// checkTagRouting validates the tag fields of the group name; errors wrap ErrInvalid.
func checkTagRouting(name string, g ModelGroup) error {
	if g.TagMatchAll && !g.TagFiltering {
		return fmt.Errorf("%w: model group %q: tag_match_all needs tag_filtering: true", ErrInvalid, name)
	}
	if g.TagFailOpen && !g.TagFiltering {
		return fmt.Errorf("%w: model group %q: tag_fail_open needs tag_filtering: true", ErrInvalid, name)
	}
	if err := CheckTagRoutePrefix(g.TagRoutePrefix); err != nil {
		return fmt.Errorf("%w: model group %q: tag_routing_prefix: %w", ErrInvalid, name, err)
	}
	if g.TagRoutePrefix != "" && !g.TagFiltering {
		return fmt.Errorf("%w: model group %q: tag_routing_prefix needs tag_filtering: true", ErrInvalid, name)
	}
	if err := checkTagRegex(name, g); err != nil {
		return err
	}
	if len(g.Tags) == 0 {
		return nil
	}
	if len(g.Tags) != len(g.Models) {
		return fmt.Errorf("%w: model group %q: tags: one list per model, got %d for %d models", ErrInvalid, name, len(g.Tags), len(g.Models))
	}
	for i, tags := range g.Tags {
		if err := CheckDeploymentTags(fmt.Sprintf("tags[%d]", i), tags); err != nil {
			return fmt.Errorf("model group %q: %w", name, err)
		}
	}
	return nil
}

// CheckTagRoutePrefix validates a tag-routing prefix (ModelGroup.TagRoutePrefix; "" for
// none): 2-32 letters, digits or . _ / - ending with ':' (a request's tag holds a mark
// only right after a ':', CheckTags), as "route:".
func CheckTagRoutePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	body, ok := strings.CutSuffix(prefix, ":")
	if !ok || body == "" || len(prefix) > 32 || !tagChars(body) || strings.ContainsAny(body, "!&") {
		return fmt.Errorf("%q must be 2-32 letters, digits or . _ : / - ending with ':' (as \"route:\")", prefix)
	}
	return nil
}

// checkTagRegex validates the TagRegex patterns of the group name; errors wrap ErrInvalid.
func checkTagRegex(name string, g ModelGroup) error {
	if len(g.TagRegex) == 0 {
		return nil
	}
	if len(g.TagRegex) != len(g.Models) {
		return fmt.Errorf("%w: model group %q: tag_regex: one list per model, got %d for %d models", ErrInvalid, name, len(g.TagRegex), len(g.Models))
	}
	for i, patterns := range g.TagRegex {
		if err := CheckTagPatterns(fmt.Sprintf("tag_regex[%d]", i), patterns); err != nil {
			return fmt.Errorf("model group %q: %w", name, err)
		}
	}
	return nil
}

// CheckTagPatterns validates the tag patterns of a deployment (LiteLLM's tag_regex):
// at most MaxTagPatterns, each a regular expression of Go's RE2 syntax of at most
// MaxTagPatternLength bytes; field names them in the *ValidationError.
func CheckTagPatterns(field string, patterns []string) error {
	if len(patterns) > MaxTagPatterns {
		return invalid(field, "at most %d patterns, got %d", MaxTagPatterns, len(patterns))
	}
	for i, p := range patterns {
		if p == "" || len(p) > MaxTagPatternLength {
			return invalid(field, "pattern %d must be 1-%d bytes", i, MaxTagPatternLength)
		}
		if _, err := regexp.Compile(p); err != nil {
			return invalid(field, "pattern %d %q is not a regular expression (Go's RE2 syntax): %v", i, p, err)
		}
	}
	return nil
}

// routingTags are the tags of a request that select deployments: its tags but a batch's
// own batch:<id> (which the server adds to a batch's lines for its reports). Without such
// a tag (the usual case), or with only it, nothing is allocated.
func routingTags(tags []string) []string {
	batch := 0
	for _, t := range tags {
		if isBatchTag(t) {
			batch++
		}
	}
	switch batch {
	case 0:
		return tags
	case len(tags):
		return nil
	}
	return slices.DeleteFunc(slices.Clone(tags), isBatchTag)
}

// isBatchTag reports whether t is a batch's own tag (BatchTagPrefix).
func isBatchTag(t string) bool { return strings.HasPrefix(t, BatchTagPrefix) }

// tagAsk is what selects the members of a tag-filtered model group for one request.
type tagAsk struct {
	// tags are the request's tags, its key's and team's among them.
	tags []string
	// userAgent is the caller's User-Agent (Scope.UserAgent), for TagRegex.
	userAgent string
	// inherited are the key's and team's tags (Scope.InheritedTags), for TagFailOpen.
	inherited []string
}

// tagAsk is what selects the members of a tag-filtered group for req.
func (r *Request) tagAsk() tagAsk {
	return tagAsk{tags: r.Tags, userAgent: r.userAgent, inherited: r.inheritedTags}
}

// tagAsk is what selects the members of a tag-filtered group for a request of s with tags.
func (s Scope) tagAsk(tags []string) tagAsk {
	return tagAsk{tags: tags, userAgent: s.UserAgent, inherited: s.InheritedTags}
}

// tagMembers returns the members of grp the request ask describes may use, as LiteLLM's
// tag-based routing (router_settings.enable_tag_filtering) picks them; false when none may:
//   - without TagFiltering, every member (grp.Models itself: nothing is allocated);
//   - tags starting with TagRoutePrefix are matched without it;
//   - a request's "!tag" leaves out the members carrying tag, its "&tag" keeps only those
//     carrying tag; of the members left, a request with plain tags (or, without "&" tags,
//     from a caller whose User-Agent some member left has TagRegex patterns for) uses
//     those carrying one of them (all of them with TagMatchAll) or one of whose patterns
//     matches the User-Agent (with TagMatchAll, only members without tags of their own);
//     when none does, those left tagged DefaultTag — unless one of the plain tags is a tag
//     of some member of the group or came with TagRoutePrefix (the request asked for
//     those members, and they do not fit), or none left is tagged DefaultTag: then none;
//   - a request with marked tags only: the members left; with exclusions only, of the
//     group's members tagged DefaultTag (when it has some) those left;
//   - a request without tags: the members tagged DefaultTag, else every member;
//   - where the above gives none, with TagFailOpen, those failOpen gives.
func (grp *ModelGroup) tagMembers(ask tagAsk) ([]string, bool) {
	if !grp.TagFiltering {
		return grp.Models, true
	}
	tags, confirmed := grp.unprefixTags(routingTags(ask.tags))
	plain, requires, marked := 0, false, false
	for _, t := range tags {
		switch tagMark(t) {
		case RequireTagMark:
			requires, marked = true, true
		case ExcludeTagMark:
			marked = true
		default:
			plain++
		}
	}
	byAgent := ask.userAgent != "" && !requires && grp.agentPatternsLeft(tags)
	switch {
	case plain == 0 && !byAgent && !marked:
		if defaults := grp.defaultMembers(); len(defaults) > 0 {
			return defaults, true
		}
		return grp.Models, true
	case plain == 0 && !byAgent:
		onlyDefaults := !requires && len(grp.defaultMembers()) > 0
		var left []string
		for i, m := range grp.Models {
			own := grp.memberTags(i)
			if fitsMarks(own, tags) && (!onlyDefaults || slices.Contains(own, DefaultTag)) {
				left = append(left, m)
			}
		}
		if len(left) == 0 {
			return grp.failOpen(tags, ask.inherited, confirmed)
		}
		return left, true
	}
	var matched, defaults []string
	known := false
	for _, t := range confirmed {
		known = known || tagMark(t) == 0
	}
	header := ""
	if byAgent {
		header = "User-Agent: " + ask.userAgent
	}
	for i, m := range grp.Models {
		own := grp.memberTags(i)
		hits := 0
		for _, t := range tags {
			if tagMark(t) == 0 && slices.Contains(own, t) {
				hits++
			}
		}
		known = known || hits > 0
		if !fitsMarks(own, tags) {
			continue
		}
		if slices.Contains(own, DefaultTag) {
			defaults = append(defaults, m)
		}
		switch {
		case hits > 0 && (!grp.TagMatchAll || hits == plain):
			matched = append(matched, m)
		case byAgent && (!grp.TagMatchAll || len(own) == 0) && grp.agentMatches(i, header):
			matched = append(matched, m)
		}
	}
	switch {
	case len(matched) > 0:
		return matched, true
	case len(defaults) > 0 && !known:
		return defaults, true
	}
	return grp.failOpen(tags, ask.inherited, confirmed)
}

// unprefixTags returns tags with TagRoutePrefix taken off those starting with it, and
// those (without it) apart: the caller's routing directives. Without such a tag (the usual
// case) tags itself is returned and nothing is allocated.
func (grp *ModelGroup) unprefixTags(tags []string) (out, confirmed []string) {
	prefix := grp.TagRoutePrefix
	if prefix == "" || !slices.ContainsFunc(tags, func(t string) bool { return strings.HasPrefix(t, prefix) }) {
		return tags, nil
	}
	out = make([]string, 0, len(tags))
	for _, t := range tags {
		bare, ok := strings.CutPrefix(t, prefix)
		switch {
		case !ok:
			out = append(out, t)
		case bare != "":
			out, confirmed = append(out, bare), append(confirmed, bare)
		}
	}
	return out, confirmed
}

// failOpen gives the members a request whose tags (TagRoutePrefix taken off; confirmed:
// those that had it) select none falls back to with TagFailOpen (LiteLLM's
// allow_fail_open): of the members passing the marks of tags that the key's or team's
// tags (inherited) hold too, those tagged DefaultTag, else all of them. None (false)
// without TagFailOpen, when those marks leave no member, or when an "&tag" no member
// carries (and not confirmed) is what hides the members the request's other marks select.
func (grp *ModelGroup) failOpen(tags, inherited, confirmed []string) ([]string, bool) {
	if !grp.TagFailOpen || grp.inventedTagHidesMembers(tags, confirmed) {
		return nil, false
	}
	inherited, _ = grp.unprefixTags(routingTags(inherited))
	var kept []string
	for _, t := range tags {
		if tagMark(t) != 0 && slices.Contains(inherited, t) {
			kept = append(kept, t)
		}
	}
	var left, defaults []string
	for i, m := range grp.Models {
		own := grp.memberTags(i)
		if !fitsMarks(own, kept) {
			continue
		}
		left = append(left, m)
		if slices.Contains(own, DefaultTag) {
			defaults = append(defaults, m)
		}
	}
	if len(defaults) > 0 {
		return defaults, true
	}
	return left, len(left) > 0
}

// inventedTagHidesMembers reports whether some of the "&" tags among tags are carried by
// no member (and were not confirmed routing directives) while the others, with the "!"
// tags, select some member: the invented tag alone emptied the request's members, and
// TagFailOpen must not route around it.
func (grp *ModelGroup) inventedTagHidesMembers(tags, confirmed []string) bool {
	var probe []string
	invented := false
	for _, t := range tags {
		switch tagMark(t) {
		case ExcludeTagMark:
			probe = append(probe, t)
		case RequireTagMark:
			if grp.carries(t[1:]) || slices.Contains(confirmed, t) {
				probe = append(probe, t)
			} else {
				invented = true
			}
		}
	}
	if !invented || !slices.ContainsFunc(probe, func(t string) bool { return tagMark(t) == RequireTagMark }) {
		return false
	}
	for i := range grp.Models {
		if fitsMarks(grp.memberTags(i), probe) {
			return true
		}
	}
	return false
}

// carries reports whether some member of grp carries tag.
func (grp *ModelGroup) carries(tag string) bool {
	for i := range grp.Models {
		if slices.Contains(grp.memberTags(i), tag) {
			return true
		}
	}
	return false
}

// agentPatternsLeft reports whether a member the marked tags among tags leave has
// TagRegex patterns.
func (grp *ModelGroup) agentPatternsLeft(tags []string) bool {
	for i := range grp.Models {
		if i < len(grp.tagRegexps) && len(grp.tagRegexps[i]) > 0 && fitsMarks(grp.memberTags(i), tags) {
			return true
		}
	}
	return false
}

// agentMatches reports whether one of the i-th member's patterns matches header.
func (grp *ModelGroup) agentMatches(i int, header string) bool {
	if i >= len(grp.tagRegexps) {
		return false
	}
	for _, re := range grp.tagRegexps[i] {
		if re.MatchString(header) {
			return true
		}
	}
	return false
}

// MaxTagPatterns bounds a model group member's TagRegex patterns, and MaxTagPatternLength
// each pattern's length.
const (
	MaxTagPatterns      = 16
	MaxTagPatternLength = 512
)

// compileTagRegex gives the groups with TagRegex patterns their compiled patterns,
// returning groups itself when none has any (else a copy: the caller's map is not
// written). The patterns were checked (checkTagRouting).
func compileTagRegex(groups map[string]ModelGroup) map[string]ModelGroup {
	has := false
	for _, g := range groups {
		has = has || len(g.TagRegex) > 0
	}
	if !has {
		return groups
	}
	out := make(map[string]ModelGroup, len(groups))
	for name, g := range groups {
		if len(g.TagRegex) > 0 {
			g.tagRegexps = make([][]*regexp.Regexp, len(g.TagRegex))
			for i, patterns := range g.TagRegex {
				for _, p := range patterns {
					g.tagRegexps[i] = append(g.tagRegexps[i], regexp.MustCompile(p))
				}
			}
		}
		out[name] = g
	}
	return out
}

// memberTags are the tags of grp's i-th member (none when the group has no tags).
func (grp *ModelGroup) memberTags(i int) []string {
	if i < len(grp.Tags) {
		return grp.Tags[i]
	}
	return nil
}

// defaultMembers are grp's members tagged DefaultTag.
func (grp *ModelGroup) defaultMembers() []string {
	var out []string
	for i, m := range grp.Models {
		if slices.Contains(grp.memberTags(i), DefaultTag) {
			out = append(out, m)
		}
	}
	return out
}

// tagMark is the tag-routing mark t starts with (ExcludeTagMark, RequireTagMark), or 0.
func tagMark(t string) byte {
	if len(t) > 1 && (t[0] == ExcludeTagMark || t[0] == RequireTagMark) {
		return t[0]
	}
	return 0
}

// fitsMarks reports whether a member carrying own passes the marked tags among tags:
// none of the excluded ones, every required one.
func fitsMarks(own, tags []string) bool {
	for _, t := range tags {
		switch tagMark(t) {
		case ExcludeTagMark:
			if slices.Contains(own, t[1:]) {
				return false
			}
		case RequireTagMark:
			if !slices.Contains(own, t[1:]) {
				return false
			}
		}
	}
	return true
}

// tagTargets keeps the targets of the model group asked (its members, as groupTargets
// resolves them) that the request's tags select, for the operations other than chat
// (embeddings, audio, images, moderation, rerank), as expandGroups does for chat: a
// *TagRoutingError when none fits. Targets of a name that is no tag-filtered group are
// returned as they are. The targets are matched to the members by name, not position:
// the routes may have been replaced (SetRoutes) since they were resolved, and a target
// the group in force does not select is never kept.
func (g *Gateway) tagTargets(asked string, ask tagAsk, targets []target) ([]target, error) {
	grp, ok := g.routes().groups[asked]
	if !ok || !grp.TagFiltering {
		return targets, nil
	}
	members, fit := grp.tagMembers(ask)
	kept := make([]target, 0, len(members))
	for _, t := range targets {
		if fit && slices.Contains(members, t.name) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, &TagRoutingError{Model: asked, Tags: routingTags(ask.tags)}
	}
	return kept, nil
}

// asTagRoutingError returns the *TagRoutingError of err's chain, or nil. Apart from its
// caller so that the target variable errors.As needs is allocated only when there is an
// error (a request without one allocates nothing for it).
func asTagRoutingError(err error) *TagRoutingError {
	var te *TagRoutingError
	if errors.As(err, &te) {
		return te
	}
	return nil
}
