"""A resize whose output plane is 224 x 224 (a common image size) is read: the candidates are
compared at every output position, which the recognizer refused past 200,000 rows (the plane
times four values of the other axes: 200,704 here)."""
import opinfo
from opinfo.recognize import resize
from tir import topi


def test_a_224_by_224_output_is_compared_whole():
    assert 224 * 224 * 4 > 200_000 and 224 * 224 * 4 <= resize.MAX_POSITIONS
    func = topi.lower("image.resize2d", [((1, 3, 448, 448), "float32")], size=[224, 224], method="nearest_neighbor")
    (op,) = opinfo.analyze(func).ops
    assert op.name == "image.resize2d"
    assert op.attrs["size"] == (224, 224) and op.attrs["method"] == "nearest_neighbor"
    assert op.attrs["coordinate_transformation_mode"] == "half_pixel"


def test_past_the_limit_it_abstains_without_evaluating():
    func = topi.lower("image.resize2d", [((1, 3, 256, 256), "float32")], size=[512, 512], method="nearest_neighbor")
    assert opinfo.analyze(func).ops == ()
