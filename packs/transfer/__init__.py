"""Moving a whole Pack: the Pack's side of export and import (``service``: ``pack.transfer``)
in the file formats of ``formats``; an import is run by :mod:`packs.pack_io`."""
