# What type checkers see of `import porter` (py.typed): the API as the functions and classes
# it is. At run time porter/__init__.py loads them on first use, and `porter.check` /
# `porter.convert` are the feature modules, callable as these functions.
import types

from porter.api import CheckReport as CheckReport
from porter.api import ConfigError as ConfigError
from porter.api import ConvertReport as ConvertReport
from porter.api import Finding as Finding
from porter.api import RuleError as RuleError
from porter.api import check as check
from porter.api import convert as convert
from porter.api import settings_for as settings_for

__version__: str
__all__: list[str]

class FeatureModule(types.ModuleType):
    def __call__(self, *args: object, **kwargs: object) -> object: ...
