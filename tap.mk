# siselect_tap, the optional pgTAP assertions (extension/siselect_tap.control): plain SQL,
# installed beside siselect by `make install` once the Makefile includes this file.
# Its script needs no build step (no @BOOT@: it only calls siselect's functions).
DATA += extension/siselect_tap.control sql/siselect_tap--0.1.0.sql
