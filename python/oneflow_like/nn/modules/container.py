"""Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict (torch.nn.modules.container)."""
from collections import OrderedDict

import oneflow_like as flow
from oneflow_like.nn.modules.module import Module, Parameter


class _ListLike(Module):
    """Shared by Sequential and ModuleList: children in insertion order."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def _renumber(self, mods):
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)


class Sequential(_ListLike):
    """Runs its children in order; Sequential(m0, m1, ...) or Sequential(OrderedDict(...))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(idx, len(self))]
        self.add_module(key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for k in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]:
            del self._modules[k]


class ModuleList(_ListLike):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        del mods[idx]
        self._renumber(mods)

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._renumber(mods)


class _DictLike(Module):
    """Shared by ModuleDict and ParameterDict: a name table (`_table`) used as a dict;
    subclasses say how a value is registered (`__setitem__`)."""

    _table = "_modules"

    def _entries(self):
        return self.__dict__[self._table]

    def __getitem__(self, key):
        return self._entries()[key]

    def __delitem__(self, key):
        del self._entries()[key]

    def __len__(self):
        return len(self._entries())

    def __iter__(self):
        return iter(self._entries())

    def __contains__(self, key):
        return key in self._entries()

    def keys(self):
        return self._entries().keys()

    def values(self):
        return self._entries().values()

    def items(self):
        return self._entries().items()

    def pop(self, key):
        return self._entries().pop(key)

    def clear(self):
        self._entries().clear()

    def update(self, values):
        items = values.items() if hasattr(values, "items") else values
        for k, v in items:
            self[k] = v


class ModuleDict(_DictLike):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key, module):
        self.add_module(key, module)


def _as_parameter(value):
    if isinstance(value, flow.Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """Parameters in a list, registered as "0", "1", ...; plain tensors become Parameters."""

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self)[idx])
        return self._parameters[str(_index(idx, len(self)))]

    def __setitem__(self, idx, value):
        self.register_parameter(str(_index(idx, len(self))), _as_parameter(value))

    def append(self, value):
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self


class ParameterDict(_DictLike):
    """Parameters by name, in insertion order; plain tensors become Parameters."""

    _table = "_parameters"

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key, value):
        self.register_parameter(key, _as_parameter(value))


def _index(idx, n):
    idx = int(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for a container of length {n}")
    return idx + n if idx < 0 else idx


from oneflow_like.nn.modules._paths import late_names  # noqa: E402

__getattr__ = late_names(__name__)
