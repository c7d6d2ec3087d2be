"""The optional image libraries, loaded on first use: paddle.dataset decodes without them where it can."""


def cv2():
    """opencv-python, or None."""
    try:
        import cv2   # kept in a function: an optional, heavy dependency, loaded by the first image decoded
    except ImportError:
        return None
    return cv2


def pil_image():
    """Pillow's Image module, or None."""
    try:
        from PIL import Image   # kept in a function: an optional dependency, loaded by the first image decoded
    except ImportError:
        return None
    return Image
