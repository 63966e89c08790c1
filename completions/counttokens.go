package completions

import (
	"context"

	"github.com/switchyard-ai/switchyard/providers"
)

// CountTokens estimates the prompt tokens req would cost on its first model, without
// calling anyone: the messages (with the stored history of req.ConversationID), tool
// definitions, images and files, counted as providers.EstimateUsage does (OpenAI's
// tokenizer for OpenAI models, an estimate for other families). req is validated as
// Complete validates it.
func (g *Gateway) CountTokens(ctx context.Context, scope Scope, req *Request) (int, error) {
	if g.breakers == nil {
		return 0, ErrZeroGateway
	}
	if req == nil {
		return 0, errNilRequest()
	}
	req.userAgent, req.inheritedTags = scope.UserAgent, scope.InheritedTags
	primary, fallback, err := g.validate(req)
	if err != nil {
		return 0, err
	}
	if len(primary) == 0 { // a group none of whose members the tags select: its fallbacks answer
		primary = fallback
	}
	if b := scope.Budget; b != nil { // as Complete would refuse it
		if err := g.budgetAllows(b, req.Models, primary[:1]); err != nil {
			return 0, err
		}
	}
	var msgs []providers.Message
	if req.ConversationID != "" {
		_, history, err := g.scopeConversation(ctx, scope, req.ConversationID)
		if err != nil {
			return 0, err
		}
		for _, m := range history {
			sm := Message{Role: m.Role, Content: m.Content}
			msgs = append(msgs, providers.Message{Role: m.Role, Content: sm.Text()})
		}
	}
	model := primary[0].model
	if _, ok := primary[0].p.(providers.BaseModeler); ok {
		// An Azure OpenAI deployment counts in its base model's tokenizer, as it is priced.
		model = providers.PriceModel(primary[0].p, model)
	}
	return promptTokens(model, msgs, req), nil
}

// EstimatePromptTokens counts the prompt tokens of req's messages and tool definitions in
// model's tokenizer (model is "provider/model" or a bare name; see providers.TokenEncoding),
// as CountTokens does, without resolving req's models, checking a budget or reading a
// stored conversation: a count for any model name, as LiteLLM's /utils/token_counter gives.
// req is not validated.
func EstimatePromptTokens(model string, req *Request) int {
	return EstimatePromptUsage(model, req).PromptTokens
}

// EstimatePromptUsage is EstimatePromptTokens with the part of the prompt its recordings
// (input_audio parts) make as PromptAudioTokens, so that a price prices them at the audio
// input rate as the gateway bills a call that reported no usage.
func EstimatePromptUsage(model string, req *Request) providers.Usage {
	if req == nil {
		return providers.Usage{}
	}
	return promptUsage(model, nil, req)
}

// promptTokens counts history (already converted) then req's messages and tools in model's
// tokenizer.
func promptTokens(model string, history []providers.Message, req *Request) int {
	return promptUsage(model, history, req).PromptTokens
}

// promptUsage is promptTokens with the recordings' part (PromptAudioTokens).
func promptUsage(model string, history []providers.Message, req *Request) providers.Usage {
	msgs := history
	for i := range req.Messages {
		m := &req.Messages[i]
		msgs = append(msgs, providers.Message{Role: m.Role, Content: m.Text(), Parts: m.parts(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name})
	}
	preq := providers.Request{Messages: msgs, Tools: req.Tools}
	u := providers.EstimateUsage(model, &preq, nil)
	return providers.Usage{PromptTokens: u.PromptTokens, PromptAudioTokens: u.PromptAudioTokens}
}
