"""The one support package of the tests: every helper more than one test module uses — object
builders, CLI runners, schema validation, local servers (OCI registry, Helm repository, management
API), the e2e harness (tests.support.e2e) and the per-area helpers (tests.support.<area>, mirroring
tests/<area>).

The rule it holds: shared test helpers live here, never in a test module or a conftest, and no
module imports a test module or a conftest (conftests import their fixtures from here; a pytest
fixture defined here works once imported into a conftest's or a test module's namespace). A loop of
assertions first asserts it is not empty. tests/test_layout.py checks both parts of the layout."""
