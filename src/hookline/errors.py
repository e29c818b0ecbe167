"""The API's exception hierarchy; each class knows its status code and contract ``code``.

Raise these from any layer; ``api.errors.install_error_handlers`` turns them (and every framework
or unexpected error) into the contract's error body.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    status_code: int = 500
    code: str = "internal_error"
    default_message: str = "Something went wrong on our side; the error was logged."

    def __init__(
        self,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.details = details
        self.headers = headers or {}
        super().__init__(self.message)


class BadRequest(ApiError):
    """Malformed HTTP, refused by the server's parser before the app sees it (api/protocol.py)."""

    status_code = 400
    code = "bad_request"
    default_message = "The request is not valid HTTP/1.1."


class InvalidJSON(ApiError):
    status_code = 400
    code = "invalid_json"
    default_message = "The request body must be a JSON object."


class Unauthenticated(ApiError):
    status_code = 401
    code = "unauthenticated"
    default_message = "Send a valid API key as 'Authorization: Bearer hl_live_...'."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, headers={"WWW-Authenticate": 'Bearer realm="hookline"'})


class Forbidden(ApiError):
    status_code = 403
    code = "forbidden"
    default_message = "This API key lacks the scope for this operation."


class NotFound(ApiError):
    status_code = 404
    code = "not_found"
    default_message = "Not found."


class MethodNotAllowed(ApiError):
    status_code = 405
    code = "method_not_allowed"
    default_message = "This method is not allowed on this path."


class Conflict(ApiError):
    status_code = 409
    code = "conflict"
    default_message = "The resource is in a state that does not allow this."


class DoNotCall(Conflict):
    code = "do_not_call"
    default_message = "The contact is marked do-not-call."


class PayloadTooLarge(ApiError):
    status_code = 413
    code = "payload_too_large"
    default_message = "The request body is larger than 64 KiB."


class UnsupportedMediaType(ApiError):
    status_code = 415
    code = "unsupported_media_type"
    default_message = "Send the body as JSON with 'Content-Type: application/json'."


class ValidationFailed(ApiError):
    status_code = 422
    code = "validation_error"

    def __init__(self, fields: list[dict[str, str]], message: str | None = None) -> None:
        first = fields[0]["message"] if fields else "The request is not valid."
        super().__init__(message or first, details={"fields": fields})

    @classmethod
    def for_field(cls, field: str, message: str) -> ValidationFailed:
        return cls([{"field": field, "message": message}])


class IdempotencyKeyReused(ApiError):
    status_code = 422
    code = "idempotency_key_reused"
    default_message = "This Idempotency-Key was already used with a different request body."


class RateLimited(ApiError):
    status_code = 429
    code = "rate_limited"
    default_message = "Too many requests; retry after the number of seconds in Retry-After."


class HeadersTooLarge(ApiError):
    status_code = 431
    code = "headers_too_large"
    default_message = "The request line and headers together are larger than 16 KiB."


class InternalError(ApiError):
    pass


class ServiceUnavailable(ApiError):
    """The database cannot be reached (or stays locked) right now; the request did nothing."""

    status_code = 503
    code = "service_unavailable"
    default_message = "The service's database is unavailable right now; retry after Retry-After."
    retry_after_seconds = 2

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, headers={"Retry-After": str(self.retry_after_seconds)})


def error_body(
    code: str, message: str, request_id: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "success": False,
        "error": {"code": code, "message": message, "details": details, "request_id": request_id},
    }
