"""kiln.transform.PassContext: accepted so that TVM scripts run; kiln's compile always runs its
whole pipeline (fusion, layout planning, constant folding), TVM's opt_level=3."""


class PassContext:
    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None,
                 config=None, **kwargs):
        self.opt_level = opt_level
        self.config = dict(config or {})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def current():
        return PassContext()
