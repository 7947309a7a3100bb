"""The weekly Prefect flow end to end under a real Prefect server (no network: fetch_fx=False).

It runs on the session's server (tests/conftest.py `prefect_server`), in the xdist group of the
other real-server tests, so `make test` starts that server once; before, this test started a
temporary server of its own in a child process (about 15 s of its time). The warehouse is a
copy of the session's 2026-10-11 one (tests/conftest.py `w41_settings`: the bundled snapshots
and ECB rates, read in place), so the flow's rates refresh writes to a file of its own."""

import shutil
from pathlib import Path

import pytest

from gpuprices.flows.config import Settings

pytestmark = pytest.mark.xdist_group("prefect-server")  # the server of test_team_workers


def test_weekly_flow_under_prefect(prefect_server, w41_settings, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.settings import PREFECT_API_URL, temporary_settings

    s = Settings(tmp_path / "data", w41_settings.archive_root).ensure()
    shutil.copy(w41_settings.db_path, s.db_path)
    with temporary_settings({PREFECT_API_URL: prefect_server}):
        from gpuprices.flows.weekly import weekly_flow

        state = weekly_flow(s, "2026-W38", "EUR", None, fetch_fx=False, return_state=True)
        assert state.is_completed(), state
        html = state.result()
        assert Path(html) == s.reports_dir / "2026-W38" / "report.html"
        assert html.exists() and html.with_name("report.md").exists()
        # The run and both its tasks are the server's record, completed.
        with get_client(sync_client=True) as client:
            run = client.read_flow_run(state.state_details.flow_run_id)
            assert run.state.is_completed(), run.state
            tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(
                id=FlowRunFilterId(any_=[run.id])))
        names = {t.name.rsplit("-", 1)[0] for t in tasks}
        assert names == {"ecb-rates", "weekly-report"}, names
