"""The compute service dispatches every request from one table that each concept fills (issue 57, item 2): no
handler branches on the request's type, and a model's settings race is its own module's entry."""

from __future__ import annotations

import inspect

from app.core.requests import RequestDone, RequestFailed
from app.core.session import requests as rq
from app.core.session.compute import service as service_module
from app.core.session.compute import settings_race as srs
from app.core.session.compute.service import ComputeService
from app.core.settings import GenerationSettings


def test_the_settings_race_registers_its_entries_and_no_handler_branches_on_the_request_type():
    table = srs.handlers(lambda: None, lambda: None, lambda *_: iter(()))  # type: ignore[arg-type, return-value]
    assert set(table) == {rq.SettingsRaceRequest, srs.SettingsPartingRequest}
    service = ComputeService()
    assert service._table[rq.SettingsRaceRequest] is not service._table[rq.RaceRequest]
    assert "isinstance(request" not in inspect.getsource(service_module.ComputeService)


def test_a_settings_race_without_a_model_fails_by_its_table_entry_and_adds_nothing_after():
    request = rq.SettingsRaceRequest("hi", ("default", "O3"), GenerationSettings())
    events = list(ComputeService().handle(request))
    assert [type(e) for e in events] == [RequestFailed, RequestDone]  # no source maps or cache figures of no run
    assert "No model is loaded" in events[0].message
