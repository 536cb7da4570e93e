"""The public API: an explicit `__all__`, guarded, as httpx does."""

from __future__ import annotations

import toolkit

PUBLIC = ["ApiError", "DOMAIN_PARAMS", "FREE_PARAMS", "Mirror", "PENDING_PARAMS", "PLANS", "Param", "normalize_plan"]


def test_all_is_exactly_the_public_api():
    assert sorted(toolkit.__all__) == sorted(PUBLIC)
    for name in toolkit.__all__:
        assert getattr(toolkit, name) is not None


def test_every_public_callable_is_documented_and_typed():
    import inspect

    for name in (
        "search_domains",
        "get_domain",
        "search_pending_delete",
        "get_pending_delete",
        "free_domains",
        "export_rows",
        "domains_df",
        "status",
    ):
        method = getattr(toolkit.Mirror, name)
        assert method.__doc__, name
        assert "return" in inspect.get_annotations(method) or name == "domains_df", name


def test_api_error_carries_status_and_body():
    error = toolkit.ApiError(422, {"message": "x", "errors": {"tf_min": ["x"]}})
    assert error.status == 422 and error.field == "tf_min" and "x" in str(error)
