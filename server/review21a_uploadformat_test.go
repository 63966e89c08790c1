package server

import (
	"net/http"
	"testing"
)

// TestReview21aUnknownFormatWithJointOptions: an unknown format sent with a joint CSV
// option is refused naming format (the field that is wrong), not the option with a
// message claiming the upload is read as a records file of that unknown format.
func TestReview21aUnknownFormatWithJointOptions(t *testing.T) {
	e := routersServer(t)
	for _, fields := range [][2][2]string{
		{{"format", "xlsx"}, {"prompt_column", "question"}},
		{{"format", "joint"}, {"maximize", "false"}},
	} {
		ctype, body := multipartBody(t, fields[:], "file", "joint.csv", ndJointCSV(t, 20, false))
		r := postTrainForm(t, e.h, "/api/v1/routers/train/upload", testKey, ctype, body)
		wantError(t, r, http.StatusUnprocessableEntity, KindValidation, "format")
		if p, _ := r.body["param"].(string); p != "" && p != "format" {
			t.Errorf("%v: param %q, want format", fields, p)
		}
		if msg, _ := r.body["message"].(string); len(msg) < 6 || msg[:6] != "format" {
			t.Errorf("%v: message %q should name format first", fields, msg)
		}
	}
}
