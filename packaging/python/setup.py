"""The wheel bundles a native library (not a Python extension module): it is
installed as platform code and tagged py3-none-<platform>, for any Python 3.
make dist (packaging/dist.sh) names the platform in setup.cfg
([bdist_wheel] plat_name = manylinux_2_X_<arch>) and adds memworker."""

from setuptools import setup
from setuptools.dist import Distribution
from wheel.bdist_wheel import bdist_wheel


class NativeLibrary(Distribution):
    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=NativeLibrary, cmdclass={"bdist_wheel": PlatformWheel})
