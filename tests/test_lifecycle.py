"""Registry lifecycle policies: worked examples per registry."""

from __future__ import annotations

import ast
import inspect
from datetime import date, datetime, timedelta, timezone

import pytest

from toolkit.ingest import lifecycle
from toolkit.ingest.lifecycle import POLICIES, is_gtld, policy_for, predict_drop_date
from toolkit.query.params import PENDING_STATUSES

SEEN = date(2026, 11, 2)  # a Monday


@pytest.mark.parametrize(
    ("tld", "status", "days"),
    [
        # ICANN gTLDs: 30 days redemption + 5 days pending delete.
        ("com", "redemptionPeriod", 35),
        ("net", "pendingDelete", 5),
        (".shop", "redemptionPeriod", 35),
        ("online", "pendingDelete", 5),
        # Nominet: suspended at expiry + 30, renewable to day 90, then 5 days pending deletion.
        ("uk", "serverHold", 65),
        ("co.uk", "serverHold", 65),
        (".org.uk", "pendingDelete", 5),
        # EURid, DNS Belgium, SIDN, SWITCH: 40 days of quarantine.
        ("eu", "quarantine", 40),
        ("be", "quarantine", 40),
        ("nl", "quarantine", 40),
        ("ch", "quarantine", 40),
        ("li", "quarantine", 40),
        # DENIC: 30-day Redemption Grace Period after deletion.
        ("de", "redemptionPeriod", 30),
        # AFNIC: 30 days of redemption, shown with "pending delete" throughout.
        ("fr", "redemptionPeriod", 30),
        ("fr", "pendingDelete", 30),
        ("re", "redemptionPeriod", 30),
        # Registro .it: 30 days redemption + up to 5 days pendingDelete.
        ("it", "redemptionPeriod", 35),
        ("it", "pendingDelete", 5),
        # Internetstiftelsen: deactivated 60 days, then 7 days of quarantine.
        ("se", "serverHold", 67),
        ("nu", "serverHold", 67),
        ("se", "quarantine", 7),
        # CZ.NIC: out of the zone from expiry + 30, deleted on day 61.
        ("cz", "serverHold", 30),
        # auDA: Expired Hold 30 days, then purged a day after Pending Delete.
        ("com.au", "serverHold", 31),
        ("au", "pendingDelete", 1),
        # NASK: BLOCKED 30 days; DELETE_BLOCKED 5 days.
        ("pl", "serverHold", 30),
        ("pl", "pendingDelete", 5),
        # NIXI: 30-day RGP + 5-day RHP.
        ("in", "redemptionPeriod", 35),
        ("co.in", "redemptionPeriod", 35),
        ("in", "pendingDelete", 5),
        # PANDI: 30 days redemption (shown as pendingDelete) + up to 7 days pending delete.
        ("id", "redemptionPeriod", 37),
        ("co.id", "pendingDelete", 37),
        # .us, .me, .io, .cc, .tv: 30 days redemption + 5 days pending delete.
        ("us", "redemptionPeriod", 35),
        ("us", "pendingDelete", 5),
        ("me", "redemptionPeriod", 35),
        ("io", "redemptionPeriod", 35),
        ("io", "pendingDelete", 5),
        ("cc", "redemptionPeriod", 35),
        ("tv", "pendingDelete", 5),
        # InternetNZ: 90 days of pending release.
        ("nz", "pendingDelete", 90),
        ("co.nz", "pendingDelete", 90),
    ],
)
def test_worked_examples(tld, status, days):
    drop, reason = predict_drop_date(tld, status, SEEN)
    assert drop == SEEN + timedelta(days=days), reason
    assert str(days) in reason and status in reason


def test_a_com_in_redemption_drops_thirty_five_days_later():
    assert predict_drop_date("com", "redemptionPeriod", date(2026, 1, 10))[0] == date(2026, 2, 14)


def test_cira_releases_on_the_weekly_wednesday_session():
    drop, reason = predict_drop_date("ca", "redemptionPeriod", SEEN)  # + 33 days = Sat 2026-12-05
    assert drop == date(2026, 12, 9) and drop.weekday() == 2
    assert "weekly" in reason
    assert predict_drop_date("ca", "pendingDelete", date(2026, 11, 30))[0] == date(2026, 12, 9)  # Thu -> Wed
    assert predict_drop_date("ca", "pendingDelete", date(2026, 11, 29))[0] == date(2026, 12, 2)  # Sun + 3 = Wed


def test_a_dot_in_name_in_redemption_drops_after_the_rgp_and_the_rhp():
    # NIXI: 30-day RGP + 5-day RHP, released 35 days after the registrar's delete.
    assert predict_drop_date("in", "redemptionPeriod", date(2026, 3, 1))[0] == date(2026, 4, 5)
    # First seen in the RHP: 5 days.
    assert predict_drop_date("in", "pendingDelete", date(2026, 3, 31))[0] == date(2026, 4, 5)


def test_a_dot_id_name_drops_at_the_latest_37_days_after_its_delete():
    # PANDI: 30 days of redemption, then at most 7 days pending delete.
    assert predict_drop_date("id", "redemptionPeriod", date(2026, 5, 10))[0] == date(2026, 6, 16)
    assert predict_drop_date("web.id", "pendingDelete", date(2026, 5, 10))[0] == date(2026, 6, 16)


def test_us_me_io_cc_tv_follow_the_rgp_shape():
    # Deleted 2026-02-01: restorable until 2026-03-03, released 2026-03-08.
    for tld in ("us", "me", "io", "cc", "tv"):
        assert predict_drop_date(tld, "redemptionPeriod", date(2026, 2, 1))[0] == date(2026, 3, 8), tld
        assert predict_drop_date(tld, "pendingDelete", date(2026, 3, 3))[0] == date(2026, 3, 8), tld


def test_a_dot_nz_name_is_released_90_days_after_cancellation():
    assert predict_drop_date("co.nz", "pendingDelete", date(2026, 1, 15))[0] == date(2026, 4, 15)


@pytest.mark.parametrize(
    ("tld", "status"),
    [
        ("com", "clientHold"),
        ("org", "serverHold"),
        ("de", "transition"),
        ("uk", "quarantine"),
        ("jp", "pendingDelete"),
        ("es", "redemptionPeriod"),
        ("co", "redemptionPeriod"),
        ("xn--p1ai", "pendingDelete"),
        ("in", "serverHold"),
        ("id", "clientHold"),
        ("us", "quarantine"),
        ("nz", "redemptionPeriod"),
        ("io", "serverHold"),
    ],
)
def test_no_fixed_timeline_gives_none_and_a_reason(tld, status):
    drop, reason = predict_drop_date(tld, status, SEEN)
    assert drop is None
    assert reason and (tld.lstrip(".") in reason or "no fixed length" in reason)


def test_unknown_status_is_not_computable():
    assert predict_drop_date("com", "expired", SEEN) == (None, predict_drop_date("com", "expired", SEEN)[1])
    assert "unknown status" in predict_drop_date("com", "expired", SEEN)[1]


def test_evidence_may_be_a_timestamp_in_any_zone():
    late = datetime(2026, 11, 2, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # 04:30 UTC on Nov 3
    assert predict_drop_date("de", "redemptionPeriod", late)[0] == date(2026, 12, 3)
    assert predict_drop_date("de", "redemptionPeriod", datetime(2026, 11, 2, 8))[0] == date(2026, 12, 2)


def test_tld_forms_and_lookup():
    assert policy_for(".CO.UK") is POLICIES["uk"]
    assert policy_for("com") is POLICIES["gtld"] and policy_for("photography") is POLICIES["gtld"]
    assert policy_for("jp") is None and policy_for("com.br") is None
    assert is_gtld("xyz") and not is_gtld("fr") and not is_gtld("co.uk") and not is_gtld("xn--p1ai")


def test_policies_use_the_six_statuses_and_positive_days():
    for policy in POLICIES.values():
        assert policy.days and set(policy.days) <= set(PENDING_STATUSES)
        assert all(isinstance(d, int) and 0 < d <= 90 for d in policy.days.values())


def test_every_policy_row_cites_a_source():
    """Each Policy(...) row is preceded by a comment naming its source."""
    source = inspect.getsource(lifecycle)
    lines = source.splitlines()
    rows = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Policy"
    ]
    assert len(rows) >= 21
    for node in rows:
        above = []
        index = node.lineno - 2
        while index >= 0 and lines[index].strip().startswith("#"):
            above.append(lines[index])
            index -= 1
        comment = " ".join(above)
        assert "Source" in comment and ("http" in comment or "RFC" in comment), lines[node.lineno - 1]


# -- windows -------------------------------------------------------------------------------------


def test_a_window_between_two_snapshots_and_its_most_likely_day():
    from toolkit.ingest.lifecycle import predict_drop_window

    # .nu: last in the zone on the 27th, gone on the 28th: deactivated on one of the two days,
    # most likely the 28th (the registry deactivates before the 12:05 UTC snapshot)
    window, reason = predict_drop_window("nu", "serverHold", date(2025, 12, 28), date(2025, 12, 27))
    assert (window.start, window.end, window.estimate) == (date(2026, 3, 4), date(2026, 3, 5), date(2026, 3, 5))
    assert window.days == 2 and window.reason == reason
    assert "began between 2025-12-27 (last seen before) and 2025-12-28 (first seen), most likely 2025-12-28" in reason
    assert window.estimate == predict_drop_date("nu", "serverHold", date(2025, 12, 28))[0]  # the point it replaces
    # missing snapshot days widen the window; the estimate stays the first day unobserved
    window, _ = predict_drop_window("nu", "serverHold", date(2026, 1, 3), date(2025, 12, 31))
    assert (window.start, window.end, window.estimate, window.days) == (
        date(2026, 3, 8),
        date(2026, 3, 11),
        date(2026, 3, 9),
        4,
    )
    assert window.as_fields() == {
        "estimated_drop_date": "2026-03-09",
        "drop_window_start": "2026-03-08",
        "drop_window_end": "2026-03-11",
    }


def test_a_window_without_an_earlier_observation_spans_the_status():
    from toolkit.ingest.lifecycle import predict_drop_window

    window, reason = predict_drop_window("pl", "pendingDelete", SEEN)
    assert (window.start, window.end, window.estimate) == (SEEN, SEEN + timedelta(days=5), SEEN + timedelta(days=5))
    assert "may have begun up to 5 days earlier" in reason
    # CIRA: every end moves to the weekly Wednesday release
    window, reason = predict_drop_window("ca", "pendingDelete", SEEN, SEEN - timedelta(days=1))
    assert {d.weekday() for d in (window.start, window.end, window.estimate)} == {2}
    assert reason.endswith("then the next weekly release")
    assert predict_drop_window("com", "clientHold", SEEN, SEEN - timedelta(days=1)) == (
        None,
        "ICANN gTLD (RGP) gives clientHold no fixed length for .com",
    )
    assert predict_drop_window("nu", "serverHold", SEEN, SEEN)[0] is None  # last seen must come first
    assert predict_drop_window("jp", "serverHold", SEEN)[0] is None
