# What type checkers see of `import porter` (py.typed): the API, as porter/api.py defines it.
# At run time porter/__init__.py loads these names from porter.api on first use.
from porter.api import CheckReport as CheckReport
from porter.api import ConfigError as ConfigError
from porter.api import ConvertReport as ConvertReport
from porter.api import Finding as Finding
from porter.api import RuleError as RuleError
from porter.api import RunOptions as RunOptions
from porter.api import check as check
from porter.api import convert as convert
from porter.api import options_for as options_for
from porter.api import settings_for as settings_for

__version__: str
__all__: list[str]
