"""search_pyramid_hash: hashed n-gram embeddings of id sequences (op pyramid_hash in
paddle_compat/ops/defs/pyramid_hash.py)."""

from ...layer_helper import LayerHelper
from ...param_attr import ParamAttr
from ...layers.helpers import append_defined, check_variable

__all__ = ["search_pyramid_hash"]


def search_pyramid_hash(input, num_emb, space_len, pyramid_layer, rand_len, drop_out_percent, is_training,
                        use_filter, white_list_len, black_list_len, seed, lr, param_attr=None, param_attr_wl=None,
                        param_attr_bl=None, name=None, distribute_update_vars=None, dtype="float32"):
    """Pyramid hash embedding of int32 id sequences (LoD): one num_emb row per kept n-gram, n = 2 ..
    pyramid_layer, read from the hashed table W [space_len + rand_len, 1]."""
    check_variable(input, "input", "search_pyramid_hash")
    helper = LayerHelper("search_pyramid_hash", param_attr=param_attr, name=name)
    w = helper.create_parameter(attr=helper.param_attr, shape=[space_len + rand_len, 1], dtype=dtype,
                                is_bias=False)
    w.stop_gradient = True
    inputs = {"X": input, "W": w}
    # The filter lists, [len, 1] each, for lengths > 0. (Paddle also makes an empty [0, 1] black list for
    # black_list_len=0; the op never reads it, and a parameter of no rows cannot be initialised here.)
    for slot, n, pattr in (("WhiteList", white_list_len, param_attr_wl), ("BlackList", black_list_len, param_attr_bl)):
        if n > 0:
            p = helper.create_parameter(attr=ParamAttr._to_attr(pattr), shape=[n, 1], dtype=dtype, is_bias=False)
            p.stop_gradient = True
            inputs[slot] = p
    update_vars = ""
    if distribute_update_vars:
        if not isinstance(distribute_update_vars, list):
            raise TypeError("search_pyramid_hash: distribute_update_vars must be a list of parameter names, got %r"
                            % (distribute_update_vars,))
        own = [a.name for a in (param_attr, param_attr_wl, param_attr_bl) if a is not None]
        for p in distribute_update_vars:
            if p not in own:
                raise ValueError("search_pyramid_hash: distribute_update_vars names %r, which is not one of "
                                 "this layer's parameters %s" % (p, own))
        update_vars = ",".join(distribute_update_vars)
    attrs = {"num_emb": num_emb, "space_len": space_len, "pyramid_layer": pyramid_layer, "rand_len": rand_len,
             "drop_out_percent": drop_out_percent, "is_training": is_training, "use_filter": use_filter,
             "white_list_len": white_list_len, "black_list_len": black_list_len, "seed": seed, "lr": lr,
             "distribute_update_vars": update_vars}
    outs = append_defined("pyramid_hash", inputs, attrs, helper=helper, stop_gradient=("X_Temp_Out", "DropPos"))
    return outs["Out"][0]
