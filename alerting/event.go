package alerting

import (
	"fmt"
	"strings"
	"time"
)

// Event types.
const (
	// EventSoftBudget: a key's spend reached its soft budget (LiteLLM's soft_budget; it
	// never blocks).
	EventSoftBudget = "soft_budget_crossed"
	// EventBudgetNear: a key's spend reached 85% of its max budget.
	EventBudgetNear = "budget_85_percent"
	// EventBudgetReached: a key's spend reached its max budget; further requests are
	// refused until the period ends.
	EventBudgetReached = "budget_reached"
	// EventDeploymentDown: a model's circuit breaker opened, or its background health
	// check started failing (Details["source"] "health_check").
	EventDeploymentDown = "deployment_down"
	// EventDeploymentRecovered: a model's circuit breaker closed again, or its background
	// health check passes again (Details["source"] "health_check").
	EventDeploymentRecovered = "deployment_recovered"
)

// Event groups, as --alert-events names them.
const (
	// GroupBudget holds the budget events.
	GroupBudget = "budget"
	// GroupOutage holds the deployment events.
	GroupOutage = "outage"
)

// Event is one alert, posted as JSON by FormatJSON webhooks.
type Event struct {
	// Type is one of the Event constants (EventSoftBudget and so on).
	Type string `json:"event"`
	// Group is GroupBudget or GroupOutage.
	Group string `json:"group"`
	// Time is when it happened.
	Time time.Time `json:"time"`
	// Subject is what it is about: a virtual key's id or a model.
	Subject string `json:"subject"`
	// Figures are its numbers (spend_usd, max_budget_usd, failures and so on).
	Figures map[string]float64 `json:"figures,omitempty"`
	// Details are its words (error_class and so on).
	Details map[string]string `json:"details,omitempty"`
	// Message says it in a sentence, for people.
	Message string `json:"message"`
}

// Budget thresholds a BudgetEvent is about.
const (
	// ThresholdSoft is the soft budget.
	ThresholdSoft = "soft"
	// ThresholdNear is 85% of the max budget.
	ThresholdNear = "85%"
	// ThresholdMax is the max budget.
	ThresholdMax = "max"
)

// BudgetEvent is the Event of key's spend reaching threshold (ThresholdSoft, ThresholdNear,
// ThresholdMax) at at; softUSD or maxUSD 0 means the key has none. periodStart, when not
// zero, is the start of the key's budget period.
func BudgetEvent(key, threshold string, spentUSD, softUSD, maxUSD float64, periodStart, at time.Time) Event {
	return budgetEvent("Key", key, threshold, spentUSD, softUSD, maxUSD, periodStart, at)
}

// AccountKind is whose shared account a budget event is of: Noun names it in the message
// ("Team acme spent …"), Kind in Details["subject_kind"].
type AccountKind struct{ Noun, Kind string }

// The accounts besides a key's that budget events are of.
var (
	TeamAccount               = AccountKind{"Team", "team"}                               // a team's, shared by its keys
	EndUserAccount            = AccountKind{"End user", "end_user"}                       // LiteLLM's customer, shared by every request naming it
	TagAccount                = AccountKind{"Tag", "tag"}                                 // a request tag's (LiteLLM's tag budgets), shared by every request naming it
	OrganizationAccount       = AccountKind{"Organization", "organization"}               // an organization's, shared by its teams' keys and its own
	UserAccount               = AccountKind{"User", "user"}                               // an internal user's, shared by the keys made for the user
	TeamMemberAccount         = AccountKind{"Team member", "team_member"}                 // a user's membership of a team (id "team/user")
	OrganizationMemberAccount = AccountKind{"Organization member", "organization_member"} // a user's membership of an organization (id "org/user")
	ProxyAccount              = AccountKind{"Proxy budget", "proxy"}                      // the proxy-wide budget every gateway request draws on (LiteLLM's litellm-proxy-budget)
)

// AccountBudgetEvent is BudgetEvent of the account of kind k named id: its Subject is id
// and Details["subject_kind"] is k.Kind.
func AccountBudgetEvent(k AccountKind, id, threshold string, spentUSD, softUSD, maxUSD float64, periodStart, at time.Time) Event {
	e := budgetEvent(k.Noun, id, threshold, spentUSD, softUSD, maxUSD, periodStart, at)
	if e.Details == nil {
		e.Details = map[string]string{}
	}
	e.Details["subject_kind"] = k.Kind
	return e
}

// TeamBudgetEvent is AccountBudgetEvent of a team's account.
func TeamBudgetEvent(team, threshold string, spentUSD, softUSD, maxUSD float64, periodStart, at time.Time) Event {
	return AccountBudgetEvent(TeamAccount, team, threshold, spentUSD, softUSD, maxUSD, periodStart, at)
}

// EndUserBudgetEvent is AccountBudgetEvent of an end user's account (LiteLLM's customer).
func EndUserBudgetEvent(endUser, threshold string, spentUSD, softUSD, maxUSD float64, periodStart, at time.Time) Event {
	return AccountBudgetEvent(EndUserAccount, endUser, threshold, spentUSD, softUSD, maxUSD, periodStart, at)
}

// TagBudgetEvent is AccountBudgetEvent of a request tag's account (LiteLLM's tag budgets).
func TagBudgetEvent(tag, threshold string, spentUSD, softUSD, maxUSD float64, periodStart, at time.Time) Event {
	return AccountBudgetEvent(TagAccount, tag, threshold, spentUSD, softUSD, maxUSD, periodStart, at)
}

// budgetEvent is BudgetEvent of an account that noun ("Key", "Team") names as id.
func budgetEvent(noun, id, threshold string, spentUSD, softUSD, maxUSD float64, periodStart, at time.Time) Event {
	e := Event{Group: GroupBudget, Time: at.UTC(), Subject: id, Figures: map[string]float64{"spend_usd": spentUSD}}
	if softUSD > 0 {
		e.Figures["soft_budget_usd"] = softUSD
	}
	if maxUSD > 0 {
		e.Figures["max_budget_usd"] = maxUSD
	}
	if !periodStart.IsZero() {
		e.Details = map[string]string{"period_start": periodStart.UTC().Format(time.RFC3339)}
	}
	switch threshold {
	case ThresholdSoft:
		e.Type = EventSoftBudget
		e.Message = fmt.Sprintf("%s %s spent $%.4f: past its soft budget of $%.4f", noun, id, spentUSD, softUSD)
	case ThresholdNear:
		e.Type = EventBudgetNear
		e.Message = fmt.Sprintf("%s %s spent $%.4f: 85%% of its max budget of $%.4f", noun, id, spentUSD, maxUSD)
	default:
		e.Type = EventBudgetReached
		e.Message = fmt.Sprintf("%s %s spent $%.4f: its max budget of $%.4f is reached and its requests are refused", noun, id, spentUSD, maxUSD)
	}
	return e
}

// OutageEvent is the Event of model's circuit breaker opening (down true: after failures
// consecutive failures, the last of errorClass) or closing again (down false) at at.
func OutageEvent(model string, down bool, failures int, errorClass string, at time.Time) Event {
	e := Event{Group: GroupOutage, Time: at.UTC(), Subject: model}
	if !down {
		e.Type = EventDeploymentRecovered
		e.Message = fmt.Sprintf("Deployment %s recovered: its circuit breaker closed", model)
		return e
	}
	e.Type = EventDeploymentDown
	e.Figures = map[string]float64{"failures": float64(failures)}
	e.Details = map[string]string{"error_class": errorClass}
	e.Message = fmt.Sprintf("Deployment %s is down: its circuit breaker opened after %d failures (last: %s)", model, failures, errorClass)
	return e
}

// SourceHealthCheck is Details["source"] of a HealthCheckEvent.
const SourceHealthCheck = "health_check"

// HealthCheckEvent is the Event of model's background health check (serve
// --model-health-interval) starting to fail (down true: errorClass is the failure's kind)
// or passing again (down false) at at; modelNames are the names clients send for it. It is
// an outage event (GroupOutage) like OutageEvent's, with Details["source"]
// SourceHealthCheck.
func HealthCheckEvent(model string, modelNames []string, down bool, errorClass string, at time.Time) Event {
	e := Event{Group: GroupOutage, Time: at.UTC(), Subject: model,
		Details: map[string]string{"source": SourceHealthCheck, "model_names": strings.Join(modelNames, ",")}}
	if !down {
		e.Type = EventDeploymentRecovered
		e.Message = fmt.Sprintf("Deployment %s recovered: its health check passes again", model)
		return e
	}
	e.Type = EventDeploymentDown
	e.Details["error_class"] = errorClass
	e.Message = fmt.Sprintf("Deployment %s is down: its health check failed (%s)", model, errorClass)
	return e
}
