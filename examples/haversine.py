"""Great-circle distances: how far apart are pairs of points on the Earth?

Given arrays of start and end coordinates (latitude and longitude in degrees), compute the
distance along the Earth's surface in kilometres with the haversine formula

    a = sin^2(dlat / 2) + cos(lat1) cos(lat2) sin^2(dlon / 2)
    d = 2 R arcsin(sqrt(a))

which stays accurate for short distances (where the spherical law of cosines loses digits).
``bearing`` gives the initial compass heading of each route with ``arctan2``. A typical use is
a table of a million trips (taxi rides, flights, deliveries) with their pick-up and drop-off
coordinates.

Run it to see gcompile's eager-vs-compiled report for each function:

    python examples/haversine.py

or through the command line:

    gcompile compare examples/haversine.py:haversine
"""

from __future__ import annotations

import numpy as np

import gcompile

EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG)


def haversine(lat1, lon1, lat2, lon2):
    """Great-circle distance in km between (lat1, lon1) and (lat2, lon2), all in degrees."""
    lat1, lon1, lat2, lon2 = np.radians(lat1), np.radians(lon1), np.radians(lat2), np.radians(lon2)
    dlat = lat2 - lat1
    dlon = lon2 - lon1
    a = np.sin(dlat / 2.0) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2.0) ** 2
    return 2.0 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(a))


def bearing(lat1, lon1, lat2, lon2):
    """Initial bearing in degrees (0 = north, 90 = east, range [0, 360)) from point 1 to point 2."""
    lat1, lat2 = np.radians(lat1), np.radians(lat2)
    dlon = np.radians(lon2 - lon1)
    y = np.sin(dlon) * np.cos(lat2)
    x = np.cos(lat1) * np.sin(lat2) - np.sin(lat1) * np.cos(lat2) * np.cos(dlon)
    return np.mod(np.degrees(np.arctan2(y, x)), 360.0)


def example_inputs(n: int = 1_000_000):
    """``n`` trips between random points of the globe (uniform on the sphere)."""
    rng = np.random.default_rng(7)

    def points():
        lat = np.degrees(np.arcsin(rng.uniform(-1.0, 1.0, n)))
        lon = rng.uniform(-180.0, 180.0, n)
        return lat, lon

    (lat1, lon1), (lat2, lon2) = points(), points()
    return lat1, lon1, lat2, lon2


if __name__ == "__main__":
    print(gcompile.compare(haversine, *example_inputs(), repeat=10), end="\n\n")
    print(gcompile.compare(bearing, *example_inputs(), repeat=10))
