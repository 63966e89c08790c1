"""Python client of a Switchyard server (standard library only).

The key is read from ``SERVICE_API_KEY`` and the address from ``SWITCHYARD_BASE_URL``
(default http://127.0.0.1:8080) unless given to :class:`Client`.

    from switchyard import RouterTrainer, select_model
    tr = RouterTrainer()
    tr.train(["https://example.com/data.json"])
    tr.wait()
    print(tr.model()["metrics"], tr.predict(["Prove that 2+2=4"]))

Transient failures (429, 502, 503, 504, connection errors) are retried twice with backoff
by default; ``Client(retry=RetryPolicy(max_retries=5))`` changes that, ``Client(retry=None)``
turns it off.
"""

from ._http import DEFAULT_BASE_URL, ENV_API_KEY, ENV_BASE_URL, Client
from ._retry import DEFAULT_RETRY_POLICY, RetryPolicy
from .api import (MAX_PREDICT_INPUTS, AgentOptimizer, CompletionStream, LLMProvider, RankedProvider, RouterTrainer,
                  SelectModelResult, complete, create_preference, create_preference_id, model_select,
                  report_feedback, report_latency, select_model)
from .chat import ChatCompletionStream, chat_completion
from .owned import conversation, conversation_messages, delete, iterate, list_page
from .keys import issue_key, key_info, list_keys, revoke_key, rotate_key, update_key
from .teams import create_team, delete_team, get_team, list_teams, update_team
from .organizations import (add_organization_members, create_organization, delete_organizations, get_organization,
                            list_organizations, remove_organization_member, update_organization,
                            update_organization_member)
from .tags import create_tag, delete_tag, get_tag, list_tags, update_tag
from .deployments import add_deployment, delete_deployment, deployment_infos, update_deployment
from .users import (add_team_member, create_user, delete_user, get_user, iterate_users, list_team_members, list_users,
                    remove_team_member, update_team_member, update_user)
from .customers import (create_customer, delete_customer, get_customer, iterate_customers, list_customers,
                        update_customer)
from .preferences import delete_preference, get_preference, iterate_preferences, list_preferences, rename_preference
from .embeddings import embed, vectors
from .rerank import indexes, rerank
from .moderations import moderate
from .images import edit_images, generate_images
from .cache import delete_cached, purge_cache
from .usage import spend, tag_daily_activity, team_daily_activity, user_daily_activity
from .batches import (batch_results, cancel_batch, create_batch, delete_file, file_content, get_batch, get_file,
                      list_batches, list_files, upload_file, wait_batch)
from .errors import (APIError, AuthenticationError, BadRequestError, ConflictError,
                     ConnectionFailedError, GuardrailBlockedError, MissingIdError, NotFoundError,
                     PayloadTooLargeError, PermissionDeniedError, PreconditionFailedError, RateLimitError, RequestTimeoutError, ServerError,
                     StreamError,
                     StreamTruncatedError, SwitchyardError, UnknownStateError, ValidationError)

__all__ = [
    "Client", "RetryPolicy", "DEFAULT_RETRY_POLICY", "DEFAULT_BASE_URL", "ENV_API_KEY",
    "ENV_BASE_URL", "MAX_PREDICT_INPUTS",
    "AgentOptimizer", "CompletionStream", "RouterTrainer", "complete", "select_model",
    "model_select", "LLMProvider", "create_preference_id", "SelectModelResult", "RankedProvider",
    "ChatCompletionStream", "chat_completion",
    "create_preference", "report_feedback", "report_latency",
    "list_page", "iterate", "delete", "conversation", "conversation_messages",
    "issue_key", "list_keys", "key_info", "update_key", "rotate_key", "revoke_key", "PermissionDeniedError",
    "PreconditionFailedError",
    "create_team", "get_team", "list_teams", "update_team", "delete_team",
    "create_organization", "get_organization", "list_organizations", "update_organization", "delete_organizations",
    "add_organization_members", "update_organization_member", "remove_organization_member",
    "create_tag", "get_tag", "list_tags", "update_tag", "delete_tag",
    "add_deployment", "update_deployment", "delete_deployment", "deployment_infos",
    "create_user", "get_user", "list_users", "iterate_users", "update_user", "delete_user",
    "add_team_member", "list_team_members", "update_team_member", "remove_team_member",
    "create_customer", "get_customer", "list_customers", "iterate_customers", "update_customer",
    "delete_customer",
    "get_preference", "list_preferences", "iterate_preferences", "delete_preference", "rename_preference",
    "embed", "vectors", "rerank", "indexes", "moderate", "generate_images", "edit_images",
    "purge_cache", "delete_cached", "spend", "user_daily_activity", "team_daily_activity", "tag_daily_activity",
    "upload_file", "get_file", "list_files", "file_content", "delete_file", "create_batch", "get_batch",
    "list_batches", "cancel_batch", "wait_batch", "batch_results",
    "APIError", "AuthenticationError", "BadRequestError", "ConflictError",
    "ConnectionFailedError", "GuardrailBlockedError", "MissingIdError",
    "NotFoundError", "PayloadTooLargeError", "RateLimitError", "RequestTimeoutError",
    "ServerError", "StreamError",
    "StreamTruncatedError", "SwitchyardError", "UnknownStateError", "ValidationError",
]
__version__ = "0.1.0"
