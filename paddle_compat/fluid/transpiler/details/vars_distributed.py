"""Records of how variables are split over pservers (Paddle 1.8's details.vars_distributed)."""

__all__ = ["VarStruct", "VarDistributed", "VarsDistributed"]


class VarStruct:
    """A variable's static facts, detached from any program."""

    def __init__(self, name, shape, dtype, type, lod_level, persistable):
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.type = type
        self.lod_level = lod_level
        self.persistable = persistable

    def __str__(self):
        return "N: %s, S: %s, D: %s, T: %s, LL: %s, P: %s" % (
            self.name, self.shape, self.dtype, self.type, self.lod_level, self.persistable)


def _struct(var):
    if isinstance(var, VarStruct):
        return var
    return VarStruct(var.name, var.shape, var.dtype, getattr(var, "type", None),
                     getattr(var, "lod_level", 0), getattr(var, "persistable", False))


class VarDistributed:
    """One origin variable, one of its slices, and which pserver endpoint holds that slice."""

    def __init__(self, origin_var, slice_var, is_slice=None, block_id=None, offset=None, vtype=None,
                 endpoint=None):
        self.origin = _struct(origin_var)
        self.slice = _struct(slice_var)
        self.is_slice = (self.origin.shape != self.slice.shape) if is_slice is None else is_slice
        self.block_id = block_id
        self.offset = offset
        self.vtype = vtype
        self.endpoint = endpoint

    @staticmethod
    def equal(var1, var2):
        return (var1.name == var2.name and var1.type == var2.type and var1.shape == var2.shape
                and var1.dtype == var2.dtype and var1.lod_level == var2.lod_level
                and var1.persistable == var2.persistable)

    def __str__(self):
        return "%s -> %s, slice: %s, block: %s, offset: %s, type: %s, endpoint: %s" % (
            self.origin, self.slice, self.is_slice, self.block_id, self.offset, self.vtype, self.endpoint)


class VarsDistributed:
    def __init__(self):
        self.distributed_vars = []

    def add_distributed_var(self, origin_var, slice_var, is_slice=None, block_id=None, offset=None,
                            vtype=None, endpoint=None):
        self.distributed_vars.append(VarDistributed(origin_var, slice_var, is_slice, block_id, offset, vtype,
                                                    endpoint))

    def get_distributed_var_by_slice(self, var_name):
        return next((v for v in self.distributed_vars if v.slice.name == var_name), None)

    def get_distributed_var_by_origin_and_ep(self, origin_var_name, endpoint):
        return next((v for v in self.distributed_vars
                     if v.origin.name == origin_var_name and v.endpoint == endpoint), None)

    def get_distributed_vars_by_vtypes(self, vtypes, groupby=False):
        found = [v for v in self.distributed_vars if v.vtype in vtypes]
        if not groupby:
            return found
        grouped = {}
        for v in found:
            grouped.setdefault(v.origin.name, []).append(v)
        return grouped

    def get_distributed_vars_by_ep(self, endpoint, vtype=None):
        return [v for v in self.distributed_vars
                if v.endpoint == endpoint and (vtype is None or v.vtype == vtype)]

    def overview(self):
        return "\n".join(str(v) for v in self.distributed_vars)
