"""paddle.dataset.movielens: MovieLens 1M (ml-1m.zip) samples as Paddle 1.8 yields them:

    [user_id, gender (0 male, 1 female), age bucket, job_id, movie_id, [category ids], [title word ids],
     [rating * 2 - 5.0]]

Train/test is Paddle's split: one draw of numpy's RandomState(rand_seed).random_sample() per rating line,
`< test_ratio` goes to test.  We draw from a private RandomState instead of reseeding numpy's global one (same
numbers, no side effect on the caller's random state).  Paddle numbers title words and categories in Python
set order, which changes from one process to the next (string hashing); we number them in sorted order so
ids are stable across runs.
"""

import functools
import re
import zipfile

import numpy as np

from . import common

__all__ = ["train", "test", "get_movie_title_dict", "max_movie_id", "max_user_id", "age_table",
           "movie_categories", "max_job_id", "user_info", "movie_info"]

age_table = [1, 18, 25, 35, 45, 50, 56]
URL = "https://dataset.bj.bcebos.com/movielens%2Fml-1m.zip"
MD5 = "c4d9eecfca2ab87c1945afe126590906"


class MovieInfo(object):
    def __init__(self, index, categories, title):
        self.index = int(index)
        self.categories = categories
        self.title = title

    def value(self):
        return [self.index, [CATEGORIES_DICT[c] for c in self.categories],
                [MOVIE_TITLE_DICT[w.lower()] for w in self.title.split()]]

    def __str__(self):
        return "<MovieInfo id(%d), title(%s), categories(%s)>" % (self.index, self.title, self.categories)

    __repr__ = __str__


class UserInfo(object):
    def __init__(self, index, gender, age, job_id):
        self.index = int(index)
        self.is_male = gender == "M"
        self.age = age_table.index(int(age))
        self.job_id = int(job_id)

    def value(self):
        return [self.index, 0 if self.is_male else 1, self.age, self.job_id]

    def __str__(self):
        return "<UserInfo id(%d), gender(%s), age(%d), job(%d)>" % (
            self.index, "M" if self.is_male else "F", age_table[self.age], self.job_id)

    __repr__ = __str__


MOVIE_INFO = None
MOVIE_TITLE_DICT = None
CATEGORIES_DICT = None
USER_INFO = None


def _lines(package, name):
    with package.open(name) as f:
        for line in f:
            yield line.decode("latin-1")


def __initialize_meta_info__():
    global MOVIE_INFO, MOVIE_TITLE_DICT, CATEGORIES_DICT, USER_INFO
    fn = common.download(URL, "movielens", MD5)
    if MOVIE_INFO is None:
        pattern = re.compile(r"^(.*)\((\d+)\)$")
        movies, titles, categories_set = {}, set(), set()
        users = {}
        with zipfile.ZipFile(fn) as package:
            for line in _lines(package, "ml-1m/movies.dat"):
                movie_id, title, categories = line.strip().split("::")
                categories = categories.split("|")
                categories_set.update(categories)
                title = pattern.match(title).group(1)
                movies[int(movie_id)] = MovieInfo(index=movie_id, categories=categories, title=title)
                titles.update(w.lower() for w in title.split())
            for line in _lines(package, "ml-1m/users.dat"):
                uid, gender, age, job, _ = line.strip().split("::")
                users[int(uid)] = UserInfo(index=uid, gender=gender, age=age, job_id=job)
        MOVIE_TITLE_DICT = {w: i for i, w in enumerate(sorted(titles))}
        CATEGORIES_DICT = {c: i for i, c in enumerate(sorted(categories_set))}
        MOVIE_INFO, USER_INFO = movies, users
    return fn


def __reader__(rand_seed=0, test_ratio=0.1, is_test=False):
    fn = __initialize_meta_info__()
    rng = np.random.RandomState(rand_seed)
    with zipfile.ZipFile(fn) as package:
        for line in _lines(package, "ml-1m/ratings.dat"):
            if (rng.random_sample() < test_ratio) == is_test:
                uid, mov_id, rating, _ = line.strip().split("::")
                rating = float(rating) * 2 - 5.0
                yield USER_INFO[int(uid)].value() + MOVIE_INFO[int(mov_id)].value() + [[rating]]


def __reader_creator__(**kwargs):
    return lambda: __reader__(**kwargs)


train = functools.partial(__reader_creator__, is_test=False)
test = functools.partial(__reader_creator__, is_test=True)


def get_movie_title_dict():
    __initialize_meta_info__()
    return MOVIE_TITLE_DICT


def max_movie_id():
    __initialize_meta_info__()
    return max(m.index for m in MOVIE_INFO.values())


def max_user_id():
    __initialize_meta_info__()
    return max(u.index for u in USER_INFO.values())


def max_job_id():
    __initialize_meta_info__()
    return max(u.job_id for u in USER_INFO.values())


def movie_categories():
    __initialize_meta_info__()
    return CATEGORIES_DICT


def user_info():
    __initialize_meta_info__()
    return USER_INFO


def movie_info():
    __initialize_meta_info__()
    return MOVIE_INFO


def fetch():
    common.download(URL, "movielens", MD5)
