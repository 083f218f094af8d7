// libyaml's event parser, for the config file (VaultConfig/YAMLDocument.swift):
// a real YAML parser, Debian's libyaml-dev, not a hand-written one.
#include <yaml.h>
