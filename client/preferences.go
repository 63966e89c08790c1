package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Preference is a personalized routing preference: model selection with its
// PreferenceID ranks with its base router, corrected by the feedback given on its sessions.
type Preference struct {
	PreferenceID  string `json:"preference_id"`
	Name          string `json:"name,omitempty"`
	RouterModelID string `json:"router_model_id,omitempty"`
	// RouterTrainingJobID is the training job whose router the preference ranks with once
	// it completes (a preference made by Not Diamond's trainCustomRouter); until then the
	// server's default router ranks. RouterModelID wins when both are set.
	RouterTrainingJobID string `json:"router_training_job_id,omitempty"`
	// PreviousRouterModelID is the trained router that keeps ranking while a retrain's
	// job runs (and for good if it fails); empty: the server's default router.
	PreviousRouterModelID string `json:"previous_router_model_id,omitempty"`
	// CreatedAt and UpdatedAt (the last feedback) are UTC times.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// FeedbackCount is how many feedbacks the preference learned from.
	FeedbackCount int `json:"feedback_count"`
	// Models holds the feedback counts per model.
	Models []PreferenceModel `json:"models,omitempty"`
	// RouterFallback says the router the preference follows is gone, as a model selection
	// under it says (ModelSelectResponse.RouterFallback): "router_deleted" (its router
	// model was deleted: the server's default router ranks) or "training_job_deleted" (its
	// training job was deleted before it trained a router: its earlier router ranks, else
	// the default router); empty while its router can rank, trains, or when it has none.
	RouterFallback string `json:"router_fallback,omitempty"`
}

// PreferenceModel is what a preference learned about one model.
type PreferenceModel struct {
	Model string `json:"model"`
	// IsCustom says the entry is about the caller's own model of that name (a candidate
	// sent with is_custom), counted apart from the public model.
	IsCustom bool `json:"is_custom,omitempty"`
	// Feedback, Successes and Expected are the feedbacks, the thumbs up among them and the
	// successes the base router expected on those selections.
	Feedback  float64 `json:"feedback"`
	Successes float64 `json:"successes"`
	Expected  float64 `json:"expected"`
	// Adjustment is the correction, in logits, added to the base router's estimate.
	Adjustment float64 `json:"adjustment"`
	// LatencyReports is how many speeds were reported for the model, and
	// SecondsPerTokenSum the sum of their inverses (their mean is its latency).
	LatencyReports     float64 `json:"latency_reports,omitempty"`
	SecondsPerTokenSum float64 `json:"seconds_per_token_sum,omitempty"`
}

// PreferenceList is one page of preferences, newest first.
type PreferenceList struct {
	Data       []Preference `json:"data"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// CreatePreferenceRequest creates a preference; both fields are optional.
type CreatePreferenceRequest struct {
	Name string `json:"name,omitempty"`
	// RouterModelID names a trained router to personalize; empty: the default router.
	RouterModelID string `json:"router_model_id,omitempty"`
}

// CreatePreference creates a preference (POST /api/v1/preferences).
func (c *Client) CreatePreference(ctx context.Context, req *CreatePreferenceRequest) (*Preference, error) {
	if req == nil {
		req = &CreatePreferenceRequest{}
	}
	var out Preference
	if err := c.do(ctx, http.MethodPost, "/api/v1/preferences", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Preference returns a preference with its feedback counts.
func (c *Client) Preference(ctx context.Context, id string) (*Preference, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /api/v1/preferences/: %w", ErrMissingID)
	}
	var out Preference
	if err := c.do(ctx, http.MethodGet, "/api/v1/preferences/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPreferences returns the first page of the key's preferences (cursor "" for the
// first page; limit 0 for the server's default).
func (c *Client) ListPreferences(ctx context.Context, cursor string, limit int) (*PreferenceList, error) {
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out PreferenceList
	if err := c.do(ctx, http.MethodGet, "/api/v1/preferences", q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RenamePreference gives a preference a new label ("" removes it) and returns it; its
// router and feedback are kept (PATCH /api/v1/preferences/{id}; Not Diamond's
// preferences.update). An unknown id is a 404 *APIError.
func (c *Client) RenamePreference(ctx context.Context, id, name string) (*Preference, error) {
	if id == "" {
		return nil, fmt.Errorf("client: PATCH /api/v1/preferences/: %w", ErrMissingID)
	}
	var out Preference
	if err := c.do(ctx, http.MethodPatch, "/api/v1/preferences/"+url.PathEscape(id), nil, map[string]*string{"name": &name}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePreference deletes a preference with what it learned.
func (c *Client) DeletePreference(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("client: DELETE /api/v1/preferences/: %w", ErrMissingID)
	}
	return c.do(ctx, http.MethodDelete, "/api/v1/preferences/"+url.PathEscape(id), nil, nil, nil)
}

// FeedbackRequest is a thumbs up (Accuracy 1) or down (0) on one candidate of a session.
type FeedbackRequest struct {
	SessionID string `json:"session_id"`
	// Provider is the rated candidate, as in the model selection request.
	Provider Provider         `json:"provider"`
	Feedback FeedbackAccuracy `json:"feedback"`
}

// FeedbackAccuracy is the feedback's metric.
type FeedbackAccuracy struct {
	Accuracy float64 `json:"accuracy"`
}

// FeedbackResponse answers a feedback.
type FeedbackResponse struct {
	SessionID    string           `json:"session_id"`
	Feedback     FeedbackAccuracy `json:"feedback"`
	Provider     string           `json:"provider"`
	PreferenceID string           `json:"preference_id,omitempty"`
	// Personalized is false when the session had no pref_ preference: recorded only.
	Personalized  bool `json:"personalized"`
	FeedbackCount int  `json:"feedback_count,omitempty"`
	Replaced      bool `json:"replaced,omitempty"`
}

// Feedback reports a thumbs up or down on a candidate of a session (POST /api/v1/feedback).
func (c *Client) Feedback(ctx context.Context, req *FeedbackRequest) (*FeedbackResponse, error) {
	var out FeedbackResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/feedback", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// LatencyReport is how fast one candidate of a session answered.
type LatencyReport struct {
	SessionID string `json:"session_id"`
	// Provider is the candidate called, as in the model selection request.
	Provider Provider       `json:"provider"`
	Feedback LatencyMetrics `json:"feedback"`
}

// LatencyMetrics is the reported speed, output tokens per second (above 0).
type LatencyMetrics struct {
	TokensPerSecond float64 `json:"tokens_per_second"`
}

// LatencyReportResponse answers a latency report.
type LatencyReportResponse struct {
	SessionID    string         `json:"session_id"`
	Feedback     LatencyMetrics `json:"feedback"`
	Provider     string         `json:"provider"`
	PreferenceID string         `json:"preference_id,omitempty"`
	// Personalized is false when the session had no pref_ preference: recorded only.
	Personalized bool `json:"personalized"`
}

// ReportLatency reports a call's speed on a candidate of a session
// (POST /api/v1/feedback/latency); under a pref_ preference, tradeoff "latency" ranks by it.
func (c *Client) ReportLatency(ctx context.Context, req *LatencyReport) (*LatencyReportResponse, error) {
	var out LatencyReportResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/feedback/latency", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
