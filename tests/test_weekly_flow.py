"""The weekly Prefect flow end to end under a real Prefect server (no network: fetch_fx=False).

It runs on the session's server (tests/conftest.py `prefect_server`), in the xdist group of the
other real-server tests, so `make test` starts that server once; before, this test's child
process started a temporary server of its own (15-25 s). The flow still runs in a child process
of its own, as `gpuprices` runs it, whose exit hands its last logs and events to the live server.
The warehouse is a copy of the session's 2026-10-11 one (tests/conftest.py `w41_settings`: the
bundled snapshots and ECB rates, read in place), so the flow's rates refresh writes to a file of
its own."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuprices.flows.config import Settings, prefect_env
from tests.conftest import ROOT

pytestmark = pytest.mark.xdist_group("prefect-server")  # the server of test_team_workers

FLOW = ("import sys; from pathlib import Path; "
        "from gpuprices.flows.config import settings_from;"
        "from gpuprices.flows.weekly import weekly_flow;"
        "s = settings_from(sys.argv[1], sys.argv[2]);"
        "state = weekly_flow(s, '2026-W38', 'EUR', None, fetch_fx=False, return_state=True);"
        "print(state.state_details.flow_run_id); print(state.result())")


def test_weekly_flow_under_prefect(prefect_server, w41_settings, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.settings import PREFECT_API_URL, temporary_settings

    s = Settings(tmp_path / "data", w41_settings.archive_root).ensure()
    shutil.copy(w41_settings.db_path, s.db_path)
    env = os.environ | prefect_env(s) | {"PREFECT_API_URL": prefect_server}
    r = subprocess.run([sys.executable, "-c", FLOW, str(s.data_dir), str(s.archive_root)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    run_id, html = r.stdout.strip().splitlines()[-2:]
    assert Path(html) == s.reports_dir / "2026-W38" / "report.html"
    assert Path(html).exists() and Path(html).with_name("report.md").exists()
    # The run and both its tasks are the server's record, completed.
    with temporary_settings({PREFECT_API_URL: prefect_server}), \
            get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        assert run.state.is_completed(), run.state
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[run.id])))
    assert {t.name.rsplit("-", 1)[0] for t in tasks} == {"ecb-rates", "weekly-report"}
    assert all(t.state.is_completed() for t in tasks), [t.state for t in tasks]
