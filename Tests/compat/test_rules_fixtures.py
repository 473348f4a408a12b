"""Security rules through the real server, against cases recorded from live Firebase.

* targaryen-live-fixtures.json: 186 read rules deployed to real Firebase, then read over REST as a user;
  the rules were rejected at deploy (`isValid` false) or the read was allowed or denied as recorded.
* cases-from-bolt.json: Bolt's simulation suites (chat, mail, create-update-delete, regexp, …): writes
  and reads as various users with the compiled sample rules, each asserted step allowed or denied.

Both are replayed here exactly as a client would: deploy with `PUT /.settings/rules.json`, write the data
as admin, then act as the user with `auth_variable_override` (what firebase-admin's
`databaseAuthVariableOverride` sends). They need ../shared/testdata beside the clone and skip without it.
"""

import json

import pytest
import requests

from conftest import ROOT

TESTDATA = ROOT.parent / "shared" / "testdata"
ADMIN = {"Authorization": "Bearer owner"}

pytestmark = pytest.mark.skipif(
    not (TESTDATA / "rules").is_dir(),
    reason=f"the shared rules test data is not at {TESTDATA / 'rules'} (clone ../shared beside the project)",
)


def _load(name: str):
    return json.loads((TESTDATA / "rules" / name).read_text())


def _targaryen_cases():
    if not (TESTDATA / "rules").is_dir():
        return []
    fixtures = _load("targaryen-live-fixtures.json")
    return [pytest.param(fixtures["users"], case, id=f"{index:03d}") for index, case in enumerate(fixtures["tests"])]


def _rules_for(case) -> dict:
    """The rules targaryen deployed: the rule as `.read` under the sorted wildcard names (README)."""
    node: dict = {".read": case["rule"]}
    query = case.get("query", {})
    if "orderByChild" in query:
        node[".indexOn"] = query["orderByChild"]
    elif query.get("orderByValue"):
        node[".indexOn"] = ".value"
    for name in sorted(case.get("wildchildren", {}), reverse=True):
        node = {name: node}
    return {"rules": node}


def _rest_query(query: dict) -> dict:
    params = {}
    if "orderByChild" in query:
        params["orderBy"] = json.dumps(query["orderByChild"])
    elif query.get("orderByValue"):
        params["orderBy"] = json.dumps("$value")
    elif query.get("orderByKey"):
        params["orderBy"] = json.dumps("$key")
    elif query.get("orderByPriority"):
        params["orderBy"] = json.dumps("$priority")
    for name in ("startAt", "endAt", "equalTo"):
        if name in query:
            params[name] = json.dumps(query[name])
    for name in ("limitToFirst", "limitToLast"):
        if name in query:
            params[name] = str(query[name])
    return params


@pytest.mark.parametrize("users,case", _targaryen_cases())
def test_targaryen_live_fixture(hearth_server, users, case):
    base, ns = hearth_server.url, "rulesfixtures"
    deployed = requests.put(f"{base}/.settings/rules.json?ns={ns}", data=json.dumps(_rules_for(case)), headers=ADMIN)
    if not case["isValid"]:
        assert deployed.status_code == 400, f"Firebase rejected {case['rule']!r}; Hearth accepted it"
        assert "Line" in deployed.json()["error"]
        return
    assert deployed.status_code == 200, deployed.text
    assert requests.put(f"{base}/.json?ns={ns}", data=json.dumps(case.get("data")), headers=ADMIN).status_code == 200
    wildchildren = case.get("wildchildren", {})
    path = "/".join(wildchildren[name] for name in sorted(wildchildren))
    params = {"ns": ns, "auth_variable_override": json.dumps(users[case["user"]])}
    params.update(_rest_query(case.get("query", {})))
    read = requests.get(f"{base}/{path}.json", params=params, headers=ADMIN)
    allowed = case.get("evaluateTo") is True and not case.get("failAtRuntime")
    assert read.status_code == (200 if allowed else 401), f"{case['rule']!r} as {case['user']}: {read.text}"
    if not allowed:
        assert read.json() == {"error": "Permission denied"}


def _bolt_scenarios():
    if not (TESTDATA / "rules").is_dir():
        return []
    cases = _load("cases-from-bolt.json")
    return [
        pytest.param(cases["users"], scenario, id=f"{scenario['suite']}-{index}")
        for index, scenario in enumerate(cases["scenarios"])
    ]


@pytest.mark.parametrize("users,scenario", _bolt_scenarios())
def test_bolt_simulation_scenario(hearth_server, users, scenario):
    base = hearth_server.url
    ns = "boltsim" + str(abs(hash(scenario["suite"] + scenario["test"])) % 10**8)
    rules = (TESTDATA / scenario["rulesFile"]).read_text()
    assert requests.put(f"{base}/.settings/rules.json?ns={ns}", data=rules, headers=ADMIN).status_code == 200
    assert requests.put(f"{base}/.json?ns={ns}", data=json.dumps(scenario["initialData"]), headers=ADMIN).ok
    failures = []
    for number, step in enumerate(scenario["steps"]):
        user = users[step["as"]]
        params = {"ns": ns}
        if not (isinstance(user, dict) and user.get("bypassRules")):
            params["auth_variable_override"] = json.dumps(user)
        url = f"{base}{step['path'].rstrip('/')}.json"
        if step["op"] == "set":
            response = requests.put(url, params=params, data=json.dumps(step.get("value")), headers=ADMIN)
        else:
            response = requests.get(url, params=params, headers=ADMIN)
        assert response.status_code in (200, 401), f"step {number}: {response.status_code} {response.text}"
        outcome = "allow" if response.status_code == 200 else "deny"
        expected = step["expect"] or "allow"
        if outcome != expected:
            failures.append(f"step {number} ({step.get('label', '')}): {step['op']} {step['path']} as {step['as']}: "
                            f"{outcome}, expected {expected}")
    assert not failures, "\n".join(failures)
