Bxj
locationdata.binj
offset18446744073709551615j
length16p